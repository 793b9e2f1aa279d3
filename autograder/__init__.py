"""reward-drills autograder.

Table of contents (one small module per step):

    spec        Case, Mistake, FunctionSpec, AssignmentSpec: how cases are written
    seeds       the course secret and the per-case seeds derived from it
    codec       values <-> plain JSON; both engines compare these encoded outcomes
    compare     tolerance comparison of encoded values
    notebook    reading source notebooks: cell roles, points, setup/solution code
    reference   the trusted reference functions, executed from the source notebook
    evaluate    running cases, scoring, recognising known mistakes
    kernel      grade_cell(): the call inside each nbgrader hidden-test cell
    release     `drills release`: exercises/ from solutions/ with nbgrader
    cli         the `drills` command

The cases of each assignment live in ``autograder.assignments.aNN_<name>``.
"""

from autograder.kernel import grade_cell

__all__ = ["grade_cell"]
