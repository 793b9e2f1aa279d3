"""reward-drills autograder.

Table of contents (one small module per step):

    spec        Case, Mistake, FunctionSpec, AssignmentSpec: how cases are written
    seeds       the course secret and the per-case seeds derived from it
    codec       values <-> plain JSON; both engines compare these encoded outcomes
    compare     tolerance comparison of encoded values
    nbjson      notebook JSON validated against nbformat's own schema, without importing nbformat
    notebook    reading source notebooks: cell roles, points, setup/solution code
    reference   the trusted reference functions, executed from the source notebook
    cache       the outcome cache: expected and known-mistake outcomes on disk, keyed by all they use
    evaluate    running cases, scoring, recognising known mistakes
    kernel      grade_cell(): the call inside each nbgrader hidden-test cell
    release     `drills release`: exercises/ from solutions/ with nbgrader

  the sandboxed engine (`drills grade`, `drills check`):
    submission  reading a learner's notebook strictly; the program built from its cells
    sandbox     the child process: bubblewrap, rlimits, pids cgroup, timeouts, the outcome pipe
    child_harness  the code that runs inside the child (no import of this package)
    worker      warm workers for batches: one zygote per slot, a fresh isolated fork per job
    zygote      the zygote inside the sandbox: namespaces, private /tmp, no capabilities, per job
    report      grades.csv, results.json and feedback pages, written atomically
    grade_cli   the `grade` and `check` subcommands
    widgets     the "Check my work" button of every notebook

    cli         the `drills` command

The cases of each assignment live in ``autograder.assignments.aNN_<name>``.
"""

from autograder.kernel import grade_cell

__all__ = ["grade_cell"]
