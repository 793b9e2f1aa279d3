"""Layer 1, the notebooks: the course's source notebooks as data and as code.

    nbjson      notebook JSON validated against nbformat's own schema, without importing nbformat
    notebook    reading source notebooks: cell roles, points, setup/solution code
    course_values  the course form's values bundles (what Check my work grades against where
                no answer key is installed) and the outline notebook each one holds
    reference   the trusted reference functions, executed from the source notebook
    source      a graded function's def and helpers as code to rewrite; the reference without
                its input checks
    release     `drills release`: exercises/ from solutions/ with nbgrader
    layout      the rules every source notebook follows (title, story, setup, figure, widget,
                closing sections), and the check of one notebook against them

Imports nothing else from ``autograder``.
"""
