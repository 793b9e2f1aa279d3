"""reward-drills autograder.

The folders are the layers; each imports only from the ones above it in this list
(tests/test_layers.py fails on an import that runs up, or on a cycle):

    notebooks/    1  the source notebooks: JSON, cells, the reference functions, release
    cases/        2  how a case is written (spec), seeded, encoded and compared
    assignments/  3  the cases and known mistakes of each notebook, one module per assignment
    scoring/      4  running cases, scoring, diagnosing; the outcome cache; mutation testing;
                     grade_cell() for nbgrader's hidden-test cells
    engine/       5  the sandboxed engine: a learner's notebook run in a child or a warm worker
    course/       6  grading a course: the grade loop, results cache, shards, reports, exports, merge
    cli.py        7  the `drills` command
    scaffold.py   7  `drills new-function` and `drills new-notebook`: a new graded function's
                     cells, cases and rows; a new notebook's skeleton and registration
    author_check.py 7 `drills author-check`: every check an author runs, for one notebook
    widgets.py    7  the "Check my work" button of every notebook
    selfcheck.py  7  the notebooks' self-check cells: values compared as the grader compares them

Where to look: a case is written in ``assignments/aNN_<name>.py`` (its fields in
``cases/spec.py``); a submission is run by ``engine/sandbox/`` (a module per isolation mode); a
gradebook is written by ``course/gradebook.py`` (rows in ``course/report.py``). Each package's
``__init__`` lists its modules, and every module starts with its one-line purpose.
"""

__all__ = ["grade_cell"]


def __getattr__(name: str):
    # `from autograder import grade_cell` (every hidden-test cell) without importing the
    # scoring layer whenever a lower layer's module is imported.
    if name == "grade_cell":
        from autograder.scoring.kernel import grade_cell

        return grade_cell
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")
