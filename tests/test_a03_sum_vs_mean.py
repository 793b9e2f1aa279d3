"""Notebook 03 against the source's checks and brute-force loops over tokens."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import ROOT

from autograder.notebooks import reference
from autograder.scoring import kernel

A = "03_sum_vs_mean"
CURRENT, REF = [-1.0, -3.0], [-2.0, -4.0]
MODES = ("seq-mean-token-mean", "token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm")


@pytest.fixture(scope="module")
def ns():
    return reference.namespace(A, ROOT)


def _random_batch(rng, b, t):
    lengths = rng.integers(1, t + 1, size=b)
    mask = (np.arange(t)[None, :] < lengths[:, None]).astype(int)
    values = np.where(mask == 1, rng.normal(size=(b, t)), rng.uniform(50, 100, size=(b, t)))
    return values, mask


def _brute_force(values, mask, mode, max_len=None):
    """Independent oracle: plain Python loops over rows and tokens."""
    rows = [
        [float(values[b][t]) for t in range(len(mask[b])) if mask[b][t]] for b in range(len(mask))
    ]
    if mode == "seq-mean-token-mean":
        return sum(sum(r) / len(r) for r in rows) / len(rows)
    if mode == "token-mean":
        return sum(sum(r) for r in rows) / sum(len(r) for r in rows)
    if mode == "seq-mean-token-sum":
        return sum(sum(r) for r in rows) / len(rows)
    return sum(sum(r) for r in rows) / (len(rows) * max_len)


def test_source_checks_of_the_mean_sampled_log_ratio(ns):
    """Do the source's checks hold: [-4] vs [-2] gives -2.0, equal inputs 0, swapping negates?"""
    f = ns["mean_sampled_log_ratio"]
    assert f([-4.0], [-2.0]) == -2.0
    assert f(CURRENT, CURRENT) == 0.0
    assert f(REF, CURRENT) == -f(CURRENT, REF) == -1.0


def test_source_checks_of_the_shaped_reward(ns):
    """Do the source's checks hold: 1.0, -0.5 for the story and for it repeated 8 times, beta 0 gives the base?"""
    g = ns["shaped_reward"]
    assert g(0.0, [-4.0], [-2.0], 0.5) == 1.0
    assert g(0, CURRENT, REF, 0.5) == -0.5
    assert g(0, CURRENT * 8, REF * 8, 0.5) == -0.5
    assert g(-0.2, CURRENT, REF, 0.0) == -0.2
    assert g(1.0, CURRENT, CURRENT, 0.5) == 1.0


def test_sum_based_reward_would_be_minus_8_for_the_repeated_lists(ns):
    """Is the sum-based mistake what gives -8.0 on the lists repeated 8 times, as the source says?"""
    from autograder.assignments import a03_sum_vs_mean as spec

    m = next(x for x in spec.SHAPED_REWARD.mistakes if x.id == "sum-based")
    assert m.build(ns)(0, CURRENT * 8, REF * 8, 0.5) == -8.0


def test_mean_log_ratio_is_the_log_ratio_of_geometric_means(ns):
    """Is the mean token log ratio the log of the ratio of geometric-mean token probabilities (RLEF)?"""
    rng = np.random.default_rng(0)
    p, q = -rng.exponential(1.0, size=12), -rng.exponential(1.0, size=12)
    geo = np.prod(np.exp(p)) ** (1 / 12) / np.prod(np.exp(q)) ** (1 / 12)
    assert math.isclose(ns["mean_sampled_log_ratio"](list(p), list(q)), math.log(geo), rel_tol=1e-9)


def test_aggregate_loss_modes_match_brute_force_loops(ns):
    """Does every aggregation mode agree with a plain-Python loop on random padded batches?"""
    rng = np.random.default_rng(1)
    for b, t in ((1, 5), (3, 7), (6, 12), (4, 30)):
        values, mask = _random_batch(rng, b, t)
        for mode in MODES:
            max_len = t + 3 if mode == "seq-mean-token-sum-norm" else None
            got = ns["aggregate_loss"](values, mask, mode, max_len=max_len)
            assert math.isclose(
                got, _brute_force(values, mask, mode, max_len), rel_tol=1e-12, abs_tol=1e-12
            ), mode


def test_masked_mean_matches_brute_force_and_ignores_padding_values(ns):
    """Is masked_mean the loop mean over valid tokens, unchanged when the padding holds NaN?"""
    rng = np.random.default_rng(2)
    values, mask = _random_batch(rng, 5, 9)
    expected = [np.mean(values[i][mask[i] == 1]) for i in range(5)]
    np.testing.assert_allclose(ns["masked_mean"](values, mask), expected, rtol=1e-12)
    np.testing.assert_allclose(
        ns["masked_mean"](np.where(mask == 1, values, np.nan), mask.astype(bool)),
        expected,
        rtol=1e-12,
    )


def test_padding_more_columns_changes_no_mode(ns):
    """Padding the same responses to a larger T (fixed max_len): is every mode's loss unchanged?"""
    rng = np.random.default_rng(3)
    values, mask = _random_batch(rng, 4, 6)
    wider_v = np.hstack([values, rng.uniform(-9, 9, size=(4, 10))])
    wider_m = np.hstack([mask, np.zeros((4, 10), dtype=int)])
    for mode in MODES:
        a = ns["aggregate_loss"](values, mask, mode, max_len=32)
        b = ns["aggregate_loss"](wider_v, wider_m, mode, max_len=32)
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15), mode


def test_per_token_gradient_weights_follow_the_papers(ns):
    """Is the weight of one valid token 1/(B·L_b), 1/ΣL, 1/B and 1/(B·max_len) in the four modes?"""
    values, mask = _random_batch(np.random.default_rng(4), 3, 8)
    lengths = mask.sum(axis=1)
    expected = {
        "seq-mean-token-mean": 1 / (3 * lengths[0]),
        "token-mean": 1 / lengths.sum(),
        "seq-mean-token-sum": 1 / 3,
        "seq-mean-token-sum-norm": 1 / (3 * 20),
    }
    for mode, weight in expected.items():
        bumped = values.copy()
        bumped[0, 0] += 1.0
        delta = ns["aggregate_loss"](bumped, mask, mode, max_len=20) - ns["aggregate_loss"](
            values, mask, mode, max_len=20
        )
        assert math.isclose(delta, weight, rel_tol=1e-9), mode


def test_sum_over_T_and_mean_over_valid_tokens_differ_in_the_cases(ns):
    """Do the hidden masked_mean cases really tell a sum divided by T from a mean over valid tokens?"""
    from autograder.assignments import a03_sum_vs_mean as spec

    m = next(x for x in spec.MASKED_MEAN.mistakes if x.id == "divide-by-T")
    r = kernel.grade_function(A, "masked_mean", m.build(ns), namespace=ns, root=ROOT)
    failed = {c.id for c in r.cases if not c.passed}
    assert {
        "random-right-padded",
        "random-left-padded",
        "random-same-length",
        "random-bool",
        "random-single-row",
    } <= failed


def test_validation_of_aggregate_loss(ns):
    """Do a missing or short max_len, an unknown mode and a row with no valid token raise ValueError?"""
    values, mask = np.ones((2, 4)), np.array([[1, 1, 0, 0], [1, 1, 1, 1]])
    with pytest.raises(ValueError):
        ns["aggregate_loss"](values, mask, "seq-mean-token-sum-norm")
    with pytest.raises(ValueError):
        ns["aggregate_loss"](values, mask, "seq-mean-token-sum-norm", max_len=3)
    with pytest.raises(ValueError):
        ns["aggregate_loss"](values, mask, "sum")
    for mode in MODES:
        with pytest.raises(ValueError):
            ns["aggregate_loss"](values, np.array([[0, 0, 0, 0], [1, 1, 1, 1]]), mode, max_len=4)


# -- the catalogue's mistakes, as the notebook's common-mistakes table describes them ------------

VALUES = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 9.0, 9.0]])  # the self-check's batch
MASK = np.array([[1, 1, 1, 1], [1, 1, 0, 0]])
WIDER_V = np.hstack([VALUES, np.full((2, 4), 7.0)])  # the same rows padded to T = 8
WIDER_M = np.hstack([MASK, np.zeros((2, 4), dtype=int)])
NAN_PADDED = np.where(MASK == 1, VALUES, np.nan)


def _mistake(function: str, mistake: str, ns):
    from autograder.assignments import a03_sum_vs_mean as spec

    fspec = next(f for f in spec.SPEC.functions if f.name == function)
    return next(m for m in fspec.mistakes if m.id == mistake).build(ns)


@pytest.mark.parametrize(
    "function, mistake, args, quoted",
    [
        ("mean_sampled_log_ratio", "k3-per-token", (CURRENT, REF), 0.368),
        ("mean_sampled_log_ratio", "exp-of-mean", (CURRENT, REF), 2.718),
        ("mean_sampled_log_ratio", "clamped-per-token", ([-4.0], [-2.0]), 0.0),
        ("shaped_reward", "clipped-penalty", (0.0, [-4.0], [-2.0], 0.5), 0.0),
        ("shaped_reward", "k3-penalty", (0.0, [-4.0], [-2.0], 0.5), -2.19),
        ("shaped_reward", "abs-penalty", (0.0, [-4.0], [-2.0], 0.5), -1.0),
        ("shaped_reward", "squared-penalty", (0.0, [-4.0], [-2.0], 0.5), -2.0),
        ("masked_mean", "unmasked-numerator", (VALUES, MASK), [2.5, 14.5]),
        ("masked_mean", "global-mean", (VALUES, MASK), [3.5, 3.5]),
        ("masked_mean", "int-mask-as-index", (VALUES, MASK), [2.0, 5.5]),
        ("masked_mean", "nan-poisoning", (NAN_PADDED, MASK), [2.5, np.nan]),
        ("aggregate_loss", "unmasked-numerator", (VALUES, MASK, MODES[0]), 8.5),
        ("aggregate_loss", "unmasked-numerator", (VALUES, MASK, MODES[1]), 6.5),
        ("aggregate_loss", "sum-norm-without-B", (VALUES, MASK, MODES[3], 8), 2.625),
        ("aggregate_loss", "max-len-ignored", (VALUES, MASK, MODES[3], 8), 2.625),
        ("aggregate_loss", "max-len-ignored", (WIDER_V, WIDER_M, MODES[3], 8), 1.3125),
    ],
)
def test_common_mistakes_table_quotes_what_each_mistake_gives(ns, function, mistake, args, quoted):
    """Is the number the notebook's common-mistakes table quotes for a mistake the value its
    catalogued formula gives on the self-check's inputs (to the digits quoted)?"""
    got = _mistake(function, mistake, ns)(*args)
    np.testing.assert_allclose(got, quoted, atol=0.005, rtol=0)


def test_masking_by_multiplying_differs_only_where_padding_is_not_finite(ns):
    """Is `values * mask` the reference on finite padding, so that only the non-finite-padding case
    can catch it, and NaN there?"""
    from autograder.assignments import a03_sum_vs_mean as spec

    poisoned = _mistake("masked_mean", "nan-poisoning", ns)
    values, mask = _random_batch(np.random.default_rng(5), 4, 9)
    np.testing.assert_allclose(poisoned(values, mask), ns["masked_mean"](values, mask), rtol=1e-12)
    case = next(c for c in spec.MASKED_MEAN.cases if c.id == "non-finite-padding")
    assert case.kind == "edge"
    np.testing.assert_array_equal(ns["masked_mean"](*case.args), [1.0, 3.0])
    with np.errstate(invalid="ignore"):  # inf · 0, as a learner's code would compute it
        assert np.isnan(poisoned(*case.args)).all()


def test_an_integer_mask_used_as_an_index_needs_an_integer_mask_to_show(ns):
    """Is `values[b][mask[b]]` right with a bool mask and wrong with the same mask as 0/1 ints,
    and do the cases pass masks of both kinds?"""
    from autograder.assignments import a03_sum_vs_mean as spec

    indexed = _mistake("masked_mean", "int-mask-as-index", ns)
    np.testing.assert_array_equal(indexed(VALUES, MASK.astype(bool)), [2.5, 5.5])
    assert not np.allclose(indexed(VALUES, MASK), [2.5, 5.5])
    dtypes = {np.asarray(c.args[1]).dtype.kind for c in spec.MASKED_MEAN.cases if c.args}
    assert {"b", "i"} <= dtypes


def test_dr_grpo_normaliser_mistakes_need_max_len_above_T_and_two_rows(ns):
    """Do the Dr. GRPO cases include a batch with B > 1 and max_len > T, the only inputs on which
    dividing by max_len alone or by B·T differs from dividing by B·max_len?"""
    from autograder.assignments import a03_sum_vs_mean as spec

    fixed = [c for c in spec.AGGREGATE_LOSS.cases if c.args and c.args[2:3] == (MODES[3],)]
    assert any(
        np.asarray(c.args[0]).shape[0] > 1
        and c.kwargs.get("max_len", (c.args[3:] or [0])[0]) > np.asarray(c.args[0]).shape[1]
        for c in fixed
        if c.raises is None
    )
    without_b = _mistake("aggregate_loss", "sum-norm-without-B", ns)
    with_t = _mistake("aggregate_loss", "max-len-ignored", ns)
    right = ns["aggregate_loss"](VALUES, MASK, MODES[3], 16)
    assert without_b(VALUES, MASK, MODES[3], 16) == pytest.approx(2 * right, rel=1e-12)
    assert with_t(VALUES, MASK, MODES[3], 16) == pytest.approx(4 * right, rel=1e-12)
