"""A probe for generated inputs in text a learner reads (feedback that could be replayed).

A generated case's inputs come from the course secret and the student id, the same on every
regrade: any of their numbers in feedback can be read and replayed. :func:`leaked` finds the
numbers of :func:`generated_digits` (six leading significant digits each, rounded as
feedback prints them, or cut) at the start of any number written in a text.
"""

from __future__ import annotations

import re

from autograder import assignments
from autograder.scoring import evaluate, memo


def _floats(x) -> list[float]:
    if isinstance(x, bool):
        return []
    if isinstance(x, (int, float)):
        return [float(x)]
    if isinstance(x, list):
        return [v for item in x for v in _floats(item)]
    if isinstance(x, dict):
        return [v for item in x.values() for v in _floats(item)]
    return []


def _digits(x: float, n: int) -> set[str]:
    """Its first ``n`` significant digits, rounded (as feedback prints it) and cut (as a
    longer number written in full starts)."""
    return {f"{abs(x):.{k}e}".replace(".", "")[:n] for k in (n - 1, 16)}


def generated_digits(assignment: str, secret: str, student: str | None, n: int = 6) -> set[str]:
    """The first ``n`` significant digits of every number of a generated input of ``student``
    under ``secret`` that the public cases could not also show: none with at most two
    decimals, none whose digits start a fixed case's input or expected value."""
    out, public = set(), set()
    for f in assignments.get(assignment).functions:
        inputs = evaluate.materialize(assignment, f, secret, student)
        expected = memo.reference_outcomes(assignment, f, inputs)
        for case, inp, e in zip(f.cases, inputs, expected):
            numbers = {d for x in _floats(inp["args"]) if round(x, 2) != x for d in _digits(x, n)}
            if case.hidden:
                out |= numbers
            else:
                public |= numbers | {d for x in _floats(e.get("value")) for d in _digits(x, n)}
    out -= public
    assert len(out) > 20
    return out


def leaked(text: str, digits: set[str]) -> list[str]:
    """The generated inputs whose leading digits start a number written in ``text``."""
    numbers = {
        t.replace(".", "").lstrip("0") for t in re.findall(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)
    }
    return sorted(d for d in digits if any(n.startswith(d) for n in numbers))
