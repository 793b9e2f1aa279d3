"""Layer 4, scoring: running cases, scoring them, diagnosing what went wrong.

    evaluate    running cases, scoring by kind, diagnosing (known mistakes first)
    shapes      error shapes (a factor, an offset, a transpose ...) when no known mistake fits
    memo        evaluate's outcomes memoised, in memory and through the outcome cache: the
                wrapper the grade loop and grade_cell call
    stubs       helpers left as stubs: named as the cause of the functions that call them
    cache       the outcome cache: expected and known-mistake outcomes on disk, keyed by all they use
    mutation    mutants of the reference solutions, to prove the hidden cases
    anchors     hand-computed expected values the reference must reproduce; numbers shown to learners
    kernel      grade_cell(): the call inside each nbgrader hidden-test cell, and grade_function,
                the in-kernel engine it runs (the nbgrader engine)

Imports from :mod:`autograder.notebooks`, :mod:`autograder.cases` and
:mod:`autograder.assignments` (layer 3, the case modules).
"""
