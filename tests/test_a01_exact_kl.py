"""Notebook 01 against hand-computed numbers and an independent numpy oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import ROOT

from autograder.notebooks import reference
from autograder.scoring import evaluate, kernel

A = "01_exact_kl"


@pytest.fixture(scope="module")
def ns():
    return reference.namespace(A, ROOT)


def test_story_numbers_to_six_decimals(ns):
    """Are the story's numbers the ones the curriculum states: -1.609438, +0.587787, 0.368064?"""
    assert [round(x, 6) for x in ns["log_ratios"]([0.1, 0.9], [0.5, 0.5])] == [-1.609438, 0.587787]
    assert round(ns["forward_kl"]([0.1, 0.9], [0.5, 0.5]), 6) == 0.368064


def test_kl_agrees_with_numpy_oracle_on_random_distributions(ns):
    """Do forward_kl and reverse_kl match an independent numpy computation?"""
    rng = np.random.default_rng(0)
    for n in range(2, 12):
        p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
        assert math.isclose(
            ns["forward_kl"](list(p), list(q)), float(np.sum(p * np.log(p / q))), rel_tol=1e-12
        )
        assert math.isclose(
            ns["reverse_kl"](list(p), list(q)), float(np.sum(q * np.log(q / p))), rel_tol=1e-12
        )


def test_kl_is_nonnegative_and_zero_only_for_equal(ns):
    """Is KL >= 0 (Gibbs' inequality) and 0 for identical distributions?"""
    rng = np.random.default_rng(1)
    for _ in range(50):
        p, q = list(rng.dirichlet(np.ones(4))), list(rng.dirichlet(np.ones(4)))
        assert ns["forward_kl"](p, q) > 0 and ns["reverse_kl"](p, q) > 0
        assert ns["forward_kl"](p, p) == 0.0


def test_unweighted_average_is_negative_for_the_story(ns):
    """Would the unweighted-average mistake really give a negative 'KL' for the story (-0.510826)?"""
    from autograder.assignments import a01_exact_kl

    m = next(x for x in a01_exact_kl.FORWARD_KL.mistakes if x.id == "unweighted")
    assert round(m.build(ns)([0.1, 0.9], [0.5, 0.5]), 6) == -0.510826


def test_feedback_names_the_clamping_mistake(ns):
    """Does a learner who clamps log ratios at 0 read that diagnosis, with the story's 0.529008?"""
    from autograder.assignments import a01_exact_kl

    m = next(x for x in a01_exact_kl.FORWARD_KL.mistakes if x.id == "clamped")
    r = kernel.grade_function(A, "forward_kl", m.build(ns), namespace=ns, root=ROOT)
    text = evaluate.feedback_text(r)
    assert "clamped each log ratio at 0" in text and "0.529008" in text
    assert "story" in text  # the failing public case is shown with its note


def test_a_finite_kl_where_the_reference_has_a_zero_is_named(ns):
    """A learner who clamps q_i to 1e-6 returns 6.214608, not inf, for [0.5, 0.5] against [1, 0]:
    does the feedback name `reference-zero-finite`, and is everything else right?"""

    def clamped_reference(policy, reference):
        ns["_check_distributions"](policy, reference, allow_zeros=True)
        return math.fsum(p * math.log(p / max(q, 1e-6)) for p, q in zip(policy, reference) if p)

    assert round(clamped_reference([0.5, 0.5], [1.0, 0.0]), 6) == 6.214608
    r = kernel.grade_function(A, "forward_kl", clamped_reference, namespace=ns, root=ROOT)
    assert r.mistake == "reference-zero-finite"
    assert [c.id for c in r.cases if not c.passed] == ["reference-zero"]


def test_epsilon_smoothing_is_caught_on_valid_inputs_despite_being_close(ns):
    """log((p + 1e-5) / (q + 1e-5)) is within 1e-4 of the log ratio: do the value cases still fail
    it (the tolerance is 1e-9), with the `epsilon-smoothed` diagnosis?"""
    from autograder.assignments import a01_exact_kl

    m = next(x for x in a01_exact_kl.LOG_RATIOS.mistakes if x.id == "epsilon-smoothed")
    got, want = m.build(ns)([0.1, 0.9], [0.5, 0.5]), ns["log_ratios"]([0.1, 0.9], [0.5, 0.5])
    assert 0 < max(abs(a - b) for a, b in zip(got, want)) < 1e-4
    r = kernel.grade_function(A, "log_ratios", m.build(ns), namespace=ns, root=ROOT)
    assert r.mistake == "epsilon-smoothed"
    assert any(c.id == "story" and not c.passed for c in r.cases)
