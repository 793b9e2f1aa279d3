"""reward-drills autograder.

Table of contents (one small module per step):

    spec        Case (value / edge / invalid), Split, Mistake, FunctionSpec: how cases are written
    seeds       the course secret and the per-case seeds derived from it
    codec       values <-> plain JSON; both engines compare these encoded outcomes
    compare     tolerance comparison of encoded values
    notebook    reading source notebooks: cell roles, points, setup/solution code
    reference   the trusted reference functions, executed from the source notebook
    evaluate    running cases, scoring by kind, diagnosing (known mistakes first)
    shapes      error shapes (a factor, an offset, a transpose ...) when no known mistake fits
    mutation    mutants of the reference solutions, to prove the hidden cases; the reference
                without its input checks
    kernel      grade_cell(): the call inside each nbgrader hidden-test cell
    release     `drills release`: exercises/ from solutions/ with nbgrader

  the sandboxed engine (`drills grade`, `drills check`):
    submission  reading a learner's notebook strictly; the program built from its cells
    sandbox     the child process: bubblewrap, rlimits, pids cgroup, timeouts, the outcome pipe
    child_harness  the code that runs inside the child (no import of this package)
    report      grades.csv, results.json(l) and feedback pages, assembled atomically from a stream
    grade_cli   the `grade` and `check` subcommands: the streaming grade loop, resume, shards

  grading a whole course:
    results_cache  OUT/.drills-cache: one atomic entry per graded submission (resumable runs)
    shards      `--shard K/N`: which submissions one of N batch jobs grades
    run_manifest   run.json: what a run (or shard) was, checked before merging
    merge       `drills merge`: one gradebook and report from shard outputs
    course_report  report.html/report.json: score distributions, mistakes ranked per function
    canvas      canvas.csv: the gradebook in Canvas's import format
    gradescope  `drills gradescope-bundle`: a Gradescope autograder that runs `drills grade`

    widgets     the "Check my work" button of every notebook

    cli         the `drills` command

The cases of each assignment live in ``autograder.assignments.aNN_<name>``.
"""

from autograder.kernel import grade_cell

__all__ = ["grade_cell"]
