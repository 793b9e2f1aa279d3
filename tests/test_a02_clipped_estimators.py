"""Notebook 02 against the curriculum's numbers and independent oracles (closed forms, sampling)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import ROOT

from autograder.notebooks import reference
from autograder.scoring import evaluate, kernel

A = "02_clipped_estimators"
POLICY, REFERENCE = [0.1, 0.9], [0.5, 0.5]


@pytest.fixture(scope="module")
def ns():
    return reference.namespace(A, ROOT)


def _exact_kl(p, q):
    """Independent oracle: the forward KL by numpy over the policy's support."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    keep = p > 0
    return float(np.sum(p[keep] * np.log(p[keep] / q[keep])))


def test_clipped_expectation_is_0_529008_against_exact_0_368064(ns):
    """Does the clipped expectation of the story's pair come out at 0.529008, above the exact 0.368064?"""
    assert round(ns["clipped_expectation"](POLICY, REFERENCE), 6) == 0.529008
    assert round(_exact_kl(POLICY, REFERENCE), 6) == 0.368064


def test_k1_and_k3_moments_equal_the_exact_kl_of_the_01_pair(ns):
    """Are k1 and k3 unbiased for the 01 pair, i.e. is their enumerated mean the exact KL?"""
    for est in (ns["k1"], ns["k3"]):
        mean, _ = ns["estimator_moments"](POLICY, REFERENCE, est)
        assert math.isclose(mean, _exact_kl(POLICY, REFERENCE), rel_tol=1e-12)


def test_k1_and_k3_are_unbiased_on_random_distributions(ns):
    """Do k1 and k3 average to the exact KL on random pairs, while k2 and clipped_k1 do not?"""
    rng = np.random.default_rng(0)
    for n in range(2, 9):
        p, q = list(rng.dirichlet(np.ones(n))), list(rng.dirichlet(np.ones(n)))
        kl = _exact_kl(p, q)
        for name in ("k1", "k3"):
            assert math.isclose(ns["estimator_moments"](p, q, ns[name])[0], kl, rel_tol=1e-9)
        assert ns["estimator_moments"](p, q, ns["clipped_k1"])[0] > kl  # clipping only adds
        assert not math.isclose(ns["estimator_moments"](p, q, ns["k2"])[0], kl, rel_tol=1e-6)


def test_k3_misses_the_reference_mass_outside_the_policy_support(ns):
    """Where the reference has mass the policy lacks, is E[k3] = KL − that mass (E[r] < 1)?"""
    p, q = [0.0, 0.5, 0.5], [0.2, 0.4, 0.4]
    mean, _ = ns["estimator_moments"](p, q, ns["k3"])
    assert math.isclose(mean, _exact_kl(p, q) - 0.2, rel_tol=1e-12)


def test_k3_is_nonnegative_on_random_inputs_while_k1_is_not(ns):
    """Is every k3 value >= 0 on random log probabilities, of every shape, while k1 goes negative?"""
    rng = np.random.default_rng(1)
    a, b = -rng.exponential(2.0, size=(40, 30)), -rng.exponential(2.0, size=(40, 30))
    assert (ns["k3"](a, b) >= 0).all()
    assert (ns["k1"](a, b) < 0).any()
    assert (ns["k3"](a, a) == 0).all()


def test_estimators_match_their_closed_forms_elementwise(ns):
    """Do k1, k2, k3, clipped_k1 equal Schulman's formulas written with r = q/p per element?"""
    rng = np.random.default_rng(2)
    lp, lq = -rng.exponential(1.0, size=25), -rng.exponential(1.0, size=25)
    r = np.exp(lq) / np.exp(lp)
    np.testing.assert_allclose(ns["k1"](lp, lq), -np.log(r), rtol=1e-12)
    np.testing.assert_allclose(ns["k2"](lp, lq), 0.5 * np.log(r) ** 2, rtol=1e-12)
    np.testing.assert_allclose(ns["k3"](lp, lq), (r - 1) - np.log(r), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(ns["clipped_k1"](lp, lq), np.maximum(0, -np.log(r)), rtol=1e-12)


def test_estimators_return_float64_arrays_of_the_broadcast_shape(ns):
    """Do the per-sample estimators broadcast like numpy and return float64 arrays?"""
    a, b = np.full((2, 1, 3), -1.0), np.full((4, 3), -2.0)
    for name in ("k1", "k2", "k3", "clipped_k1"):
        out = ns[name](a, b)
        assert isinstance(out, np.ndarray) and out.dtype == np.float64
        assert out.shape == np.broadcast_shapes(a.shape, b.shape)


def test_monte_carlo_k3_converges_to_the_exact_kl(ns):
    """Is the Monte Carlo mean of k3 over a seeded sample of 20,000 within 4 standard errors of the KL?"""
    rng = np.random.default_rng(3)
    samples = rng.choice(2, size=20_000, p=POLICY)
    _, var = ns["estimator_moments"](POLICY, REFERENCE, ns["k3"])
    estimate = ns["monte_carlo_kl"](samples, POLICY, REFERENCE, ns["k3"])
    assert abs(estimate - 0.368064) < 4 * math.sqrt(var / len(samples))


def test_monte_carlo_with_exact_frequencies_is_the_enumerated_mean(ns):
    """With a sample holding the policy's frequencies exactly, does monte_carlo_kl equal estimator_moments' mean?"""
    sample = [0] + [1] * 9
    for name in ("k1", "k2", "k3", "clipped_k1"):
        mc = ns["monte_carlo_kl"](sample, POLICY, REFERENCE, ns[name])
        assert math.isclose(
            mc, ns["estimator_moments"](POLICY, REFERENCE, ns[name])[0], rel_tol=1e-12
        )


def test_population_variance_of_k1_is_p1_p2_times_squared_gap(ns):
    """For two outcomes, is Var[k1] = p1 · p2 · (log ratio 1 − log ratio 2)², the population variance?"""
    lr = np.log(np.array(POLICY) / np.array(REFERENCE))
    _, var = ns["estimator_moments"](POLICY, REFERENCE, ns["k1"])
    assert math.isclose(var, POLICY[0] * POLICY[1] * (lr[0] - lr[1]) ** 2, rel_tol=1e-12)
    assert round(var, 6) == 0.434502


def test_feedback_names_clipping_inside_k1(ns):
    """Does a learner who clips inside k1 read that diagnosis?"""
    from autograder.assignments import a02_clipped_estimators as spec

    m = next(x for x in spec.K1_SPEC.mistakes if x.id == "clipped-inside")
    r = kernel.grade_function(A, "k1", m.build(ns), namespace=ns, root=ROOT)
    assert r.mistake == "clipped-inside" and "clipped inside k1" in evaluate.feedback_text(r)


def test_inverted_k3_is_biased_for_the_story(ns):
    """Would the inverted-ratio k3 really average to 0.271936 for the story, not the KL?"""
    from autograder.assignments import a02_clipped_estimators as spec

    m = next(x for x in spec.K3_SPEC.mistakes if x.id == "inverted-ratio")
    mean, _ = ns["estimator_moments"](POLICY, REFERENCE, m.build(ns))
    assert round(mean, 6) == 0.271936


@pytest.mark.parametrize("function", ["k1", "k2", "k3"])
def test_log_ratio_clamps_are_caught_by_the_large_log_ratio_cases_alone(ns, function):
    """A clamp of the log ratio (±40 for k1 and k2, ±20 for k3) changes nothing on ordinary log
    probabilities: are `large-gaps` and `ratio-underflows` (a log ratio of −800) the cases that
    catch it, and is the clamp named?"""
    from autograder.assignments import a02_clipped_estimators as spec

    fspec = spec.SPEC.function(function)
    m = next(x for x in fspec.mistakes if x.id == "log-ratio-clamped")
    r = kernel.grade_function(A, function, m.build(ns), namespace=ns, root=ROOT)
    assert [c.id for c in r.cases if not c.passed] == ["large-gaps", "ratio-underflows"]
    assert r.mistake == "log-ratio-clamped"


def test_np_cov_with_aweights_divides_the_variance_by_one_minus_the_squared_weights(ns):
    """Is the `np-cov-aweights` mistake what numpy really does: np.cov(v, aweights=p) equals
    Σ p (v − mean)² / (1 − Σ p²), 2.413898 for k1 on the story's pair?"""
    from autograder.assignments import a02_clipped_estimators as spec

    m = next(x for x in spec.ESTIMATOR_MOMENTS.mistakes if x.id == "np-cov-aweights")
    _, var = ns["estimator_moments"](POLICY, REFERENCE, ns["k1"])
    v = np.log(np.array(POLICY) / np.array(REFERENCE))
    assert math.isclose(float(np.cov(v, aweights=POLICY)), var / (1 - 0.1**2 - 0.9**2))
    assert round(m.build(ns)(POLICY, REFERENCE, ns["k1"])[1], 6) == 2.413898


def test_estimator_of_means_is_wrong_only_for_nonlinear_estimators(ns):
    """Applying the estimator to the mean log probabilities: the same as averaging for k1 (linear),
    0.060137 instead of 0.368064 for k3 on a sample with the policy's frequencies?"""
    from autograder.assignments import a02_clipped_estimators as spec

    m = next(x for x in spec.MONTE_CARLO_KL.mistakes if x.id == "estimator-of-means")
    sample = [0] + [1] * 9
    wrong = m.build(ns)
    assert math.isclose(wrong(sample, POLICY, REFERENCE, ns["k1"]), 0.368064, abs_tol=1e-6)
    assert round(wrong(sample, POLICY, REFERENCE, ns["k3"]), 6) == 0.060137
    assert round(ns["monte_carlo_kl"](sample, POLICY, REFERENCE, ns["k3"]), 6) == 0.368064
