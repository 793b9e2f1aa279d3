"""Correct maths as the field writes it gets full marks; the catalogue stays outside.

Each graded function states one tolerance (FunctionSpec.rtol / atol, printed beside "How X
is graded" in its notebook). The reference is rewritten the way verl, OpenRLHF and TRL write
the same formula (autograder.scoring.mutation.field_variant): every arithmetic and call result rounded
to float32, or a stabiliser (1e-8, and 1e-6 where the maths allows) added to every
denominator. Each variant must score full marks. That every catalogued mistake still loses
points and is named at the stated tolerance is tests/test_cases.py's
test_known_mistake_loses_points_and_is_diagnosed.
"""

from __future__ import annotations

import pytest
from conftest import ROOT, available_assignments

from autograder import assignments
from autograder.cases import spec
from autograder.scoring import kernel, mutation

ASSIGNMENTS = available_assignments()
FUNCTIONS = [(a, f.name) for a in ASSIGNMENTS for f in assignments.get(a).functions]

# Where a stabiliser in a denominator changes the maths beyond any tolerance that still tells the
# catalogue apart, with the reason. Nowhere else may a stabiliser cost a point.
STABILISER_CHANGES_THE_MATHS: dict[tuple[str, str], str] = {}
# A 1e-6 stabiliser inside a probability ratio log(p / (q + 1e-6)) moves a log ratio by
# 1e-6 / q: for q = 0.25 that is 4e-6, as far as the catalogued epsilon-smoothed mistake's
# smoothing is from it relative to the tolerance. The field puts 1e-6 in counts and norms.
LARGE_STABILISER_CHANGES_THE_MATHS = {
    ("01_exact_kl", name): "a 1e-6 stabiliser inside log(p_i / q_i) is epsilon smoothing"
    for name in ("log_ratios", "forward_kl", "reverse_kl")
} | {
    ("02_clipped_estimators", "clipped_expectation"): (
        "a 1e-6 stabiliser inside log(p_i / q_i) is epsilon smoothing"
    ),
    # A 1e-8 one moves an advantage by at most 5e-6 of itself (the random-small-spread case
    # holds every group's std in [2e-3, 5e-3]) and keeps full marks.
    ("05_grpo_lld", "group_advantages"): (
        "eps is the function's own stabiliser, a parameter (std + eps): a second 1e-6 is a "
        "different eps, which the random-small-spread case (std 2e-3 … 5e-3) tells apart"
    ),
}


def _grade_variant(assignment, function, kind, eps=mutation.STABILISER):
    fn, ns = mutation.field_variant(assignment, function, kind, ROOT, eps=eps)
    return kernel.grade_function(assignment, function, fn, namespace=ns, root=ROOT)


def _assert_full_marks(r, what):
    failed = [c.id for c in r.cases if not c.passed]
    assert not failed and r.score == r.points, (
        f"{r.function} {what} fails {failed} at its stated tolerance: correct maths as the "
        "field writes it must get full marks"
    )


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_reference_in_float32_arithmetic_scores_full_marks(assignment, function):
    """Does the reference with every intermediate result rounded to float32 (OpenRLHF's
    float32 compute_approx_kl, a torch port) pass every case?"""
    _assert_full_marks(_grade_variant(assignment, function, "float32"), "in float32")


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_reference_with_1e8_stabiliser_in_denominators_scores_full_marks(assignment, function):
    """Does the reference with + 1e-8 in every denominator (verl's masked_mean) pass every
    case, except where the stabiliser is the function's own parameter?"""
    if (assignment, function) in STABILISER_CHANGES_THE_MATHS:
        pytest.skip(STABILISER_CHANGES_THE_MATHS[(assignment, function)])
    _assert_full_marks(_grade_variant(assignment, function, "stabiliser"), "with + 1e-8")


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_reference_with_1e6_stabiliser_in_denominators_scores_full_marks(assignment, function):
    """The same with + 1e-6, the largest stabiliser the field puts in a count or a norm."""
    key = (assignment, function)
    if key in STABILISER_CHANGES_THE_MATHS or key in LARGE_STABILISER_CHANGES_THE_MATHS:
        pytest.skip(
            STABILISER_CHANGES_THE_MATHS.get(key) or LARGE_STABILISER_CHANGES_THE_MATHS[key]
        )
    _assert_full_marks(_grade_variant(assignment, function, "stabiliser", 1e-6), "with + 1e-6")


def test_the_variants_really_change_the_arithmetic():
    """A variant that changed nothing would prove nothing: on the story's masked mean the
    float32 and stabilised references differ from the float64 one, inside the tolerance."""
    import numpy as np

    from autograder.notebooks import reference

    values = np.array([[0.1, 0.2, 0.3], [1.0 / 3.0, 0.7, 9.0]])
    mask = np.array([[1, 1, 1], [1, 1, 0]])
    ref = reference.namespace("03_sum_vs_mean", ROOT)["masked_mean"](values, mask)
    f32 = mutation.field_variant("03_sum_vs_mean", "masked_mean", "float32", ROOT)[0](values, mask)
    stab = mutation.field_variant("03_sum_vs_mean", "masked_mean", "stabiliser", ROOT)[0](
        values, mask
    )
    assert not np.array_equal(f32, ref) and not np.array_equal(stab, ref)
    fs = assignments.get("03_sum_vs_mean").function("masked_mean")
    assert np.allclose(f32, ref, rtol=fs.rtol, atol=fs.atol)
    assert np.allclose(stab, ref, rtol=fs.rtol, atol=fs.atol)


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_every_case_uses_its_functions_stated_tolerance(assignment, function):
    """One stated tolerance per function: no case compares more strictly or loosely than the
    notebook says."""
    f = assignments.get(assignment).function(function)
    assert {(c.rtol, c.atol) for c in f.cases} == {(f.rtol, f.atol)}
    assert f.rtol <= 1e-4 and f.atol <= 1e-4, "a tolerance this wide hides conceptual mistakes"
    assert "1e-8" in spec.tolerance_text(f.rtol, f.atol)
