"""The same code earns the same score whatever the draw (the student id and the course secret).

Every catalogued mistake, graded in this process on TEST_DRAWS draws (a new secret and a new
student each), must score within BAND (1 %) of the function's points on all of them: a
mistake whose cost depended on the draw would cost some students more than others. The
engines are proven to agree elsewhere (tests/test_nbgrader_agreement.py, test_grade_engine.py),
so one in-process scoring stands for both. benchmarks/score_spread.py prints the full table,
with the field ports, over more draws.
"""

from __future__ import annotations

import pytest
from conftest import ROOT, available_assignments

from autograder import assignments
from autograder.scoring import spread

FUNCTIONS = [(a, f.name) for a in available_assignments() for f in assignments.get(a).functions]


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_mistake_costs_the_same_for_every_student_and_secret(assignment, function):
    """Does each catalogued mistake (and the reference) score the same, within 1 % of the
    function's points, on 20 draws of the generated cases?"""
    bodies = {"reference": lambda ns: ns[function], **spread.catalogue(assignment, function)}
    found = spread.spreads(assignment, function, bodies, spread.draws(spread.TEST_DRAWS), ROOT)
    wide = {s.name: (s.low, s.high) for s in found if not s.within_band}
    assert not wide, (
        f"{function}: these score differently for different students and secrets (lowest, "
        f"highest of {spread.TEST_DRAWS} draws; the band is {spread.BAND:.0%} of "
        f"{found[0].points:g} points): {wide}; draw each generated case so that it always holds "
        "the situation it stands for (assignments.common.until)"
    )
    reference = next(s for s in found if s.name == "reference")
    assert reference.low == reference.high == reference.points


def test_a_draw_dependent_body_is_caught():
    """The check can fail: a body that is right on half of the generated inputs only (by a
    property of the draw) is outside the band."""
    a, name = "01_exact_kl", "forward_kl"

    def build(ns):
        ref = ns[name]

        def coin(policy, reference):
            value = ref(policy, reference)
            return value + 1.0 if len(policy) > 3 and policy[0] > reference[0] else value

        return coin

    (s,) = spread.spreads(a, name, {"coin": build}, spread.draws(spread.TEST_DRAWS), ROOT)
    assert not s.within_band, s.scores


def test_a_condition_no_draw_meets_raises():
    """A stratified generator whose condition cannot hold says so instead of looping or
    handing back a draw that misses its situation."""
    import numpy as np

    from autograder.assignments.common import REDRAWS, until

    calls = []

    def make(rng):
        calls.append(1)
        return (float(rng.random()),)

    with pytest.raises(RuntimeError, match="conditions"):
        until(make, lambda x: x > 1.0)(np.random.default_rng(0))
    assert len(calls) == REDRAWS
