"""A known mistake is recognised as the field writes it.

Every catalogued conceptual mistake is still named when its values carry float32 rounding or
a stabiliser-sized error; when one other small difference moves them by 0.5 % (the nearest
mistake is named, and the feedback says something else differs as well); and a clamp is
recognised at another bound, with the bound the learner used in the feedback.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import ROOT, available_assignments, catalogued_mistakes
from test_feedback_consistency import _scaled

from autograder import assignments
from autograder.notebooks import reference
from autograder.scoring import evaluate, kernel, mutation

ASSIGNMENTS = available_assignments()
CONCEPT_MISTAKES = catalogued_mistakes(conceptual_only=True)


def _float32(fn):
    """``fn`` with its float results rounded to float32 (lists and tuples item by item)."""

    def rounded(x):
        if isinstance(x, list):
            return [rounded(v) for v in x]
        if isinstance(x, tuple) and not hasattr(x, "_fields"):
            return tuple(rounded(v) for v in x)
        return mutation._float32(x)

    def f32(*args, **kwargs):
        return rounded(fn(*args, **kwargs))

    return f32


def _mistake(a, name, mid):
    ns = reference.namespace(a, ROOT)
    m = next(x for x in assignments.get(a).function(name).mistakes if x.id == mid)
    return m, m.build(ns), ns


def _grade(a, name, fn, ns):
    return kernel.grade_function(a, name, fn, namespace=ns, root=ROOT)


@pytest.mark.parametrize("assignment,function,mistake", CONCEPT_MISTAKES)
def test_mistake_in_float32_is_still_named(assignment, function, mistake):
    m, fn, ns = _mistake(assignment, function, mistake)
    r = _grade(assignment, function, _float32(fn), ns)
    assert r.score < r.points and r.mistake == mistake, (r.mistake, r.diagnosis)


@pytest.mark.parametrize("assignment,function,mistake", CONCEPT_MISTAKES)
def test_mistake_with_a_stabiliser_sized_error_is_still_named(assignment, function, mistake):
    m, fn, ns = _mistake(assignment, function, mistake)
    r = _grade(assignment, function, _scaled(fn, 1 + 1e-7), ns)
    assert r.score < r.points and r.mistake == mistake, (r.mistake, r.diagnosis)


# Mistakes whose values lie within 0.5 % of another mistake's, or of the expected ones, on the
# cases that tell them apart: a second difference of 0.5 % makes them another mistake (or none).
NEAREST_IS_ANOTHER = {
    # eps = 1e-6 fixed and eps = 1e-4 fixed differ by about 10 % only where the std is small
    ("05_grpo_lld", "group_advantages", "eps-ignored"),
}
# Mistakes whose values lie within a lower precision's rounding of the expected ones: moved by
# 0.5 % more, the code could as well compute in float16 as add an epsilon, so the feedback says
# a miss of that size and names an epsilon among its causes (never one cause loosely)
SAID_AS_ROUNDING = {
    ("01_exact_kl", "log_ratios", "epsilon-smoothed"),
}


@pytest.mark.parametrize("assignment,function,mistake", CONCEPT_MISTAKES)
def test_mistake_with_one_other_small_difference_names_the_nearest(assignment, function, mistake):
    """The mistake's values moved by 0.5 %: the mistake is named, and the feedback says that
    something else differs as well (or the values were not numbers to move)."""
    m, fn, ns = _mistake(assignment, function, mistake)
    r = _grade(assignment, function, _scaled(fn, 1.005), ns)
    plain = _grade(assignment, function, fn, ns)
    if [c.got for c in r.cases] == [c.got for c in plain.cases]:
        pytest.skip("no float in this mistake's outputs to move")
    if (assignment, function, mistake) in NEAREST_IS_ANOTHER:
        pytest.skip("another mistake is nearer once the values move")
    if (assignment, function, mistake) in SAID_AS_ROUNDING:
        assert r.score < r.points and "near-miss:precision" in {d.id for d in r.diagnoses}
        assert "an epsilon" in r.diagnosis, r.diagnosis
        return
    assert r.score < r.points
    assert r.mistake == mistake, (r.mistake, r.diagnosis)
    if r.score < plain.score or [c.passed for c in r.cases] != [c.passed for c in plain.cases]:
        assert evaluate.SOMETHING_ELSE in r.diagnosis


def _clamped_log_ratio(ref, c, estimator):
    def f(logp, ref_logp):
        ref(logp, ref_logp)  # the same input checks
        d = np.clip(np.asarray(logp, float) - np.asarray(ref_logp, float), -c, c)
        return estimator(d)

    return f


@pytest.mark.parametrize(
    "function,learner,words",
    [
        ("k1", lambda ref: _clamped_log_ratio(ref, 20.0, lambda d: d), "[−20, 20]"),
        ("k2", lambda ref: _clamped_log_ratio(ref, 10.0, lambda d: 0.5 * d * d), "[−10, 10]"),
        (
            "k3",
            lambda ref: _clamped_log_ratio(ref, 10.0, lambda d: np.exp(-d) - 1 + d),
            "[−10, 10]",
        ),
        ("k3", lambda ref: lambda lp, rl: np.minimum(ref(lp, rl), 5.0), "at most 5"),
    ],
)
def test_a_clamp_at_another_bound_is_named_with_the_learners_bound(function, learner, words):
    """OpenRLHF clamps the log ratio at ±10 where the catalogue's mutant clamps at ±20 (k3)
    or ±40 (k1, k2): the feedback names the clamp with the learner's own bound."""
    a = "02_clipped_estimators"
    ns = reference.namespace(a, ROOT)
    r = _grade(a, function, learner(ns[function]), ns)
    assert r.score < r.points
    assert r.mistake in ("log-ratio-clamped", "value-clamped"), r.diagnosis
    assert words in r.diagnosis, r.diagnosis
    assert evaluate.SOMETHING_ELSE not in r.diagnosis


@pytest.mark.parametrize("eps,named", [(1e-4, "eps-1e-4"), (1e-6, "eps-ignored")])
def test_a_fixed_eps_in_group_advantages_is_named(eps, named):
    """TRL-style code divides by std + a fixed constant: the eps argument is ignored."""
    import torch

    a = "05_grpo_lld"
    ns = reference.namespace(a, ROOT)
    ref = ns["group_advantages"]

    def fixed(rewards, eps_arg=1e-6):
        return ref(rewards, eps)

    r = _grade(a, "group_advantages", fixed, ns)
    assert r.score < r.points and r.mistake == named, r.diagnosis
    assert torch.is_tensor(ref(torch.tensor([[1.0, 0.0]])))


def _surrogate_with(clip_high, detach_advantages: bool):
    """A learner's 07 `clipped_surrogate`: the upper clip bound ``clip_high(eps_low, eps_high)``
    and the advantages detached or not; everything else as the text asks."""

    def make(ns):
        ref = ns["clipped_surrogate"]

        def surrogate(logp, logp_old, adv, mask, eps_low=0.2, eps_high=None, mode="token-mean"):
            high = eps_low if eps_high is None else eps_high
            adv = adv.detach() if detach_advantages else adv
            ratio = torch.exp(torch.where(mask, logp - logp_old.detach(), 0.0))
            clipped = torch.clamp(ratio, 1 - eps_low, 1 + clip_high(eps_low, high))
            per_token = torch.where(mask, -torch.minimum(ratio * adv, clipped * adv), 0.0)
            if mode == "token-mean":
                return per_token.sum() / mask.sum()
            rows = per_token.sum(dim=1)
            if mode == "seq-mean-token-sum":
                return rows.mean()
            return (rows / mask.sum(dim=1)).mean()

        def clipped_surrogate(*args, **kwargs):
            ref(*args, **kwargs)
            return surrogate(*args, **kwargs)

        return clipped_surrogate

    return make


def test_two_mistakes_are_each_named_failures_counted_per_cause():
    """Symmetric bounds (eps_high ignored) and advantages not detached, in one 07 surrogate:
    the value mistake fails 6 value and edge checks, the gradient flow all 7 gradient checks.
    Counted per check, symmetric-bounds explained 6 of 13 failures (under half) and was not
    named; the gradient checks where gradient reaches `advantages` belong to the flow's cause
    and no longer count against the value mistake, so both mistakes are named, each with its
    own checks."""
    a, name = "07_beyond_nthr", "clipped_surrogate"
    ns = reference.namespace(a, ROOT)
    learner = _surrogate_with(lambda low, high: low, detach_advantages=False)(ns)
    r = _grade(a, name, learner, ns)
    text = evaluate.feedback_text(r)
    ids = [d.id for d in r.diagnoses]
    assert "symmetric-bounds" in ids and "advantages-not-detached" in ids, text
    gradient = sum(k.points for k in r.kinds if k.kind == "gradient")
    (flow,) = [d for d in r.diagnoses if d.id == "advantages-not-detached"]
    assert flow.points == pytest.approx(gradient), text
    assert r.unexplained_checks == 0, text


def test_a_value_mistake_alone_is_not_named_from_the_gradient_checks_of_another_flow():
    """The per-cause count is no licence to name a value mistake that explains few of its own
    checks: with the flow right (advantages detached), the same symmetric bounds is named,
    and a correct surrogate whose advantages alone are not detached is told only that."""
    a, name = "07_beyond_nthr", "clipped_surrogate"
    ns = reference.namespace(a, ROOT)
    alone = _grade(a, name, _surrogate_with(lambda low, high: low, True)(ns), ns)
    assert [d.id for d in alone.diagnoses] == ["symmetric-bounds"], evaluate.feedback_text(alone)
    flow = _grade(a, name, _surrogate_with(lambda low, high: high, False)(ns), ns)
    assert [d.id for d in flow.diagnoses] == ["advantages-not-detached"], evaluate.feedback_text(
        flow
    )
