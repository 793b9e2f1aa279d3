"""Layer 2, cases: how a case is written, encoded and compared.

    spec        Case (value / edge / invalid), Split, Mistake, FunctionSpec: how cases are written
    rules       the rules of each graded function that its notebook states (tests check both agree)
    seeds       the course secret and the per-case seeds derived from it
    codec       values <-> plain JSON; both engines compare these encoded outcomes
    compare     tolerance comparison of encoded values

Imports only from :mod:`autograder.notebooks`.
"""
