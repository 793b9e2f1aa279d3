"""Layer 6, the course: grading every submission and writing what an instructor reads.

    grade_cli      the `grade` and `check` subcommands: the Grader (one submission, sandboxed)
    class_run      `drills grade`'s class run: discovery, resume, shards, the gradebook
    results_cache  OUT/.drills-cache: one atomic entry per graded submission (resumable runs)
    shards         `--shard K/N`: which submissions one of N batch jobs grades
    report         the gradebook rows, results.json(l) and the feedback pages; atomic writes
    course_report  report.html/report.json: score distributions, mistakes ranked per function
    exports/       canvas.csv (Canvas's import format); a Gradescope autograder bundle
    gradebook      assemble(): every output of a run from a stream of results, grades.csv last
    run_manifest   run.json: what a run (or shard) was, checked before merging
    merge          `drills merge`: one gradebook and report from shard outputs
    launch         how the grader starts itself in a child: no learner file on its import path
    answer_key     the scan for answer keys in released notebooks and files, by behaviour
    course_release `drills release --course OUT`: the notebooks, a wheel without the answer
                   key, and the values bundles; scanned before it succeeds

Imports from every layer below; nothing below imports it.
"""
