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


# The functions whose generated cases hold the field's + 1e-6 stabiliser on one side of the
# tolerance (assignments.common.stabiliser_shows): a 1e-6 inside a log ratio is epsilon
# smoothing there (tests/test_field_maths.py), and must cost the same points on every draw.
LOG_RATIO_FUNCTIONS = [
    ("01_exact_kl", "log_ratios"),
    ("01_exact_kl", "forward_kl"),
    ("01_exact_kl", "reverse_kl"),
    ("02_clipped_estimators", "clipped_expectation"),
]


@pytest.mark.parametrize("assignment,function", LOG_RATIO_FUNCTIONS)
def test_field_stabiliser_costs_the_same_for_every_student_and_secret(assignment, function):
    """Does the reference with + 1e-6 in every denominator (inside the log ratio: smoothing)
    lose the same points on every draw, and with + 1e-8 or in float32 keep full marks on every
    draw?"""
    from autograder.scoring import mutation

    def variant(kind, eps=mutation.STABILISER):
        return lambda ns: mutation.field_variant(assignment, function, kind, ROOT, eps=eps)[0]

    bodies = {
        "+ 1e-6": variant("stabiliser", 1e-6),
        "+ 1e-8": variant("stabiliser"),
        "float32": variant("float32"),
    }
    found = {
        s.name: s
        for s in spread.spreads(
            assignment, function, bodies, spread.draws(spread.TEST_DRAWS, "field"), ROOT
        )
    }
    big = found["+ 1e-6"]
    assert big.within_band, (
        f"{function} with + 1e-6 scores {big.low} … {big.high} of {big.points} over "
        f"{spread.TEST_DRAWS} draws (band {spread.BAND:.0%}): a generated case lets the draw "
        "decide whether the stabiliser shows; hold it with common.stabiliser_shows"
    )
    assert big.high < big.points, (
        f"{function} with + 1e-6 is epsilon smoothing and must lose points"
    )
    for name in ("+ 1e-8", "float32"):
        s = found[name]
        assert s.low == s.high == s.points, (
            f"{function} {name} scores {s.low} … {s.high} of {s.points}: correct maths as the "
            "field writes it must keep full marks on every draw"
        )


def test_stabiliser_condition_tells_small_probabilities_from_large():
    """The condition can fail both ways: a draw with a probability of 0.02 shows a + 1e-6 inside
    the log ratio beyond the tolerance, one with every probability at least 0.2 and log ratios far from 0 does not."""
    import math

    from autograder.assignments.common import stabiliser_shows

    def ratios(p, q, eps):
        return [math.log(a / (b + eps)) for a, b in zip(p, q)]

    small = ([0.03, 0.97], [0.02, 0.98])
    large = ([0.2, 0.8], [0.5, 0.5])
    assert stabiliser_shows(ratios, True)(*small) and not stabiliser_shows(ratios, False)(*small)
    assert stabiliser_shows(ratios, False)(*large) and not stabiliser_shows(ratios, True)(*large)


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


def _heldout_bodies(assignment: str, function: str) -> dict:
    """The held-out mistakes of ``function`` (benchmarks/heldout_mistakes.py) as bodies."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import heldout_mistakes as heldout

    return {
        h.what: (lambda ns, h=h: heldout.build(h, ns))
        for h in heldout.HELDOUT
        if (h.assignment, h.function) == (assignment, function)
    }


# The held-out mistakes whose cost once hung on the draw: with η drawn from {0.125, 0.25, 0.5},
# an nthr_weights that weights the selected tokens 1 − η equals the reference wherever η = 0.5
# (0.61 … 0.84 of 2 by the course secret); a clipped_k1 that also clips at 1 equalled it where
# no log ratio exceeded 1 (0.42 … 0.54 of 1); a masked_mean that divides by T − 1 equalled it
# where every row had T − 1 valid tokens (0.30 … 0.44 of 2). benchmarks/score_spread.py
# --heldout measures every held-out mistake this way.
HELDOUT_SLICE = [
    ("06_nthr", "nthr_weights"),
    ("02_clipped_estimators", "clipped_k1"),
    ("03_sum_vs_mean", "masked_mean"),
]


@pytest.mark.parametrize("assignment,function", HELDOUT_SLICE)
def test_no_draw_makes_a_heldout_mistake_equal_the_reference(assignment, function):
    """Does each held-out mistake (written without the catalogue) score the same, within 1 %
    of the function's points, on every draw? A generated input where the mistake coincides
    with the reference (1 − η = η at η = 0.5) would hide it from some students only."""
    bodies = _heldout_bodies(assignment, function)
    assert bodies, f"no held-out mistake of {function} in benchmarks/heldout_mistakes.py"
    found = spread.spreads(assignment, function, bodies, spread.draws(spread.TEST_DRAWS), ROOT)
    wide = {s.name: (s.low, s.high) for s in found if not s.within_band}
    assert not wide, (
        f"{function}: these held-out mistakes score differently for different students and "
        f"secrets (lowest, highest of {spread.TEST_DRAWS} draws; band {spread.BAND:.0%} of "
        f"{found[0].points:g} points): {wide}; draw the generated cases so that no mistake "
        "coincides with the reference on them"
    )
