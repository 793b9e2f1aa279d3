"""Notebook 05 against hand-computed numbers and independent torch/numpy oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import ROOT

from autograder import assignments
from autograder.notebooks import reference
from autograder.scoring import evaluate, kernel

A = "05_grpo_lld"


@pytest.fixture(scope="module")
def ns():
    return reference.namespace(A, ROOT)


def _full_marks(ns, name, fn):
    r = kernel.grade_function(A, name, fn, namespace=ns, root=ROOT)
    return r.score == r.points, evaluate.feedback_text(r, show_hidden=True)


def test_group_advantages_matches_hand_computation(ns):
    """Two of four correct: mean 0.5, Bessel std sqrt(1/3), so advantages ±sqrt(3)/2?"""
    adv = ns["group_advantages"](
        torch.tensor([[1.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0]]), eps=0.0
    )
    half = math.sqrt(3) / 2
    # second row: mean 0.25, std sqrt((0.75² + 3·0.25²) / 3) = 0.5
    expected = torch.tensor([[half, -half, -half, half], [1.5, -0.5, -0.5, -0.5]])
    assert torch.allclose(adv, expected, atol=1e-6)


def test_group_advantages_uses_bessel_not_population_std(ns):
    """With G = 2 the Bessel std of (1, 0) is 1/sqrt(2): advantages ±0.7071, not the population ±1?"""
    adv = ns["group_advantages"](torch.tensor([[1.0, 0.0]]), eps=0.0)
    assert torch.allclose(adv, torch.tensor([[1 / math.sqrt(2), -1 / math.sqrt(2)]]), atol=1e-6)


def test_group_advantages_agrees_with_numpy_ddof1(ns):
    """On random rewards, does it equal (r - mean) / (std(ddof=1) + eps) computed in numpy float64?"""
    rng = np.random.default_rng(0)
    for _ in range(20):
        r = rng.standard_normal((rng.integers(1, 6), rng.integers(2, 9)))
        eps = float(rng.choice([1e-6, 0.01, 0.3]))
        want = (r - r.mean(1, keepdims=True)) / (r.std(1, ddof=1, keepdims=True) + eps)
        got = ns["group_advantages"](torch.tensor(r, dtype=torch.float32), eps).double().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_group_advantages_gives_zeros_not_nan_for_equal_rewards(ns):
    """Is a group of equal rewards all zeros, even with eps = 0 and a value like 0.3 that float32 rounds?"""
    adv = ns["group_advantages"](torch.tensor([[0.3, 0.3, 0.3], [1.0, 1.0, 1.0]]), eps=0.0)
    assert torch.equal(adv, torch.zeros(2, 3))


def _brute_logprob(logits, tokens, mask):
    out = []
    for b in range(logits.shape[0]):
        total = 0.0
        for t in range(logits.shape[1]):
            if mask[b, t]:
                row = [float(x) for x in logits[b, t]]
                m = max(row)
                lse = m + math.log(math.fsum(math.exp(x - m) for x in row))
                total += row[int(tokens[b, t])] - lse
        out.append(total)
    return out


def test_sequence_logprobs_agrees_with_gather_log_softmax_and_a_loop(ns):
    """On random inputs, does it equal torch's gather(log_softmax) masked sum and a pure-Python loop?"""
    rng = np.random.default_rng(1)
    for _ in range(10):
        b, t, v = (int(x) for x in rng.integers(1, 7, size=3) + 1)
        logits = torch.tensor(3 * rng.standard_normal((b, t, v)), dtype=torch.float32)
        tokens = torch.tensor(rng.integers(0, v, size=(b, t)))
        mask = torch.tensor(rng.random((b, t)) < 0.7)
        oracle = (torch.log_softmax(logits, -1).gather(-1, tokens[..., None])[..., 0] * mask).sum(1)
        got = ns["sequence_logprobs"](logits, tokens, mask)
        assert torch.allclose(got, oracle, rtol=1e-5, atol=1e-5)
        assert np.allclose(got.numpy(), _brute_logprob(logits, tokens, mask), rtol=1e-5, atol=1e-4)


def test_sequence_logprobs_is_a_sum_not_a_token_mean(ns):
    """With uniform logits over 4 tokens and 3 unmasked positions, is it 3·log(1/4), not log(1/4)?"""
    got = ns["sequence_logprobs"](
        torch.zeros(1, 4, 4), torch.tensor([[0, 1, 2, 3]]), torch.tensor([[1, 1, 1, 0]])
    )
    assert torch.allclose(got, torch.tensor([3 * math.log(0.25)]))


def test_sequence_logprobs_gradient_is_the_masked_prediction_error(ns):
    """Is it differentiable, with d/dlogits = mask · (one-hot − softmax) (the error vectors of notebook 06)?"""
    torch.manual_seed(0)
    logits = torch.randn(2, 3, 5, requires_grad=True)
    tokens = torch.tensor([[0, 4, 2], [1, 1, 3]])
    mask = torch.tensor([[1, 1, 0], [1, 0, 1]])
    ns["sequence_logprobs"](logits, tokens, mask).sum().backward()
    want = (torch.nn.functional.one_hot(tokens, 5) - torch.softmax(logits.detach(), -1)) * mask[
        ..., None
    ]
    assert torch.allclose(logits.grad, want, atol=1e-6)


def test_likelihood_change_averages_over_correct_responses_only(ns):
    """Changes +0.5 (correct), −1.0 (wrong), −0.25 (correct): is the answer (0.5 − 0.25) / 2 = 0.125?"""
    d = ns["likelihood_change"](
        torch.tensor([-3.0, -5.0, -4.0]),
        torch.tensor([-2.5, -6.0, -4.25]),
        torch.tensor([True, False, True]),
    )
    assert type(d) is float and d == pytest.approx(0.125, abs=1e-6)


def test_likelihood_change_refuses_a_group_without_correct_response(ns):
    """Does a group with no correct response raise ValueError instead of returning NaN?"""
    with pytest.raises(ValueError, match="no correct"):
        ns["likelihood_change"](
            torch.tensor([-1.0, -2.0]), torch.tensor([-1.5, -2.5]), torch.tensor([False, False])
        )


def test_lld_rate_counts_a_change_equal_to_eps(ns):
    """Def. 4.1 says change ≤ eps: do ties at 0 and at eps = 0.25 count?"""
    assert ns["lld_rate"](torch.tensor([-0.2, 0.0, 0.1, 0.3])) == 0.5
    assert ns["lld_rate"](torch.tensor([-0.5, 0.25, 0.25, 1.0]), eps=0.25) == 0.75


def test_alternative_correct_implementations_get_full_marks(ns):
    """Are the float32 tolerances wide enough for other correct ways of computing the same values?"""

    def adv_float64(rewards, eps=1e-6):
        ns["group_advantages"](rewards, eps)  # same validation
        r = rewards.double()
        std = r.std(dim=1, keepdim=True)
        out = torch.where(
            std == 0, torch.zeros_like(r), (r - r.mean(1, keepdim=True)) / (std + eps)
        )
        return out.float()

    def seq_via_probs(logits, tokens, mask):
        ns["sequence_logprobs"](logits, tokens, mask)
        p = torch.softmax(logits.double(), -1).gather(-1, tokens.long()[..., None])[..., 0]
        return (torch.log(p) * mask.double()).sum(1).float()

    def change_difference_of_means(before, after, correct):
        ns["likelihood_change"](before, after, correct)
        c = correct.bool()
        return float(after[c].mean() - before[c].mean())

    for name, fn in (
        ("group_advantages", adv_float64),
        ("sequence_logprobs", seq_via_probs),
        ("likelihood_change", change_difference_of_means),
    ):
        ok, text = _full_marks(ns, name, fn)
        assert ok, text


def _mistake(function, mistake_id, ns):
    m = next(x for x in assignments.get(A).function(function).mistakes if x.id == mistake_id)
    return m.build(ns)


def _case_args(function, case_id):
    return next(c for c in assignments.get(A).function(function).cases if c.id == case_id).args


def test_equal_rounded_case_holds_rewards_whose_float32_mean_is_off(ns):
    """no-zero-for-equal relies on eps: is the float32 mean of three 0.85s (the first group of the
    `equal-rounded` case) a rounding error off, both as sum / 3 and as sum · (1/3), so that eps
    alone leaves non-zero advantages, while the reference returns zeros for every equal group?"""
    (rewards,) = _case_args("group_advantages", "equal-rounded")
    x, total = np.float32(0.85), np.float32(np.float32(0.85) + np.float32(0.85)) + np.float32(0.85)
    assert total / np.float32(3) != x and total * (np.float32(1) / np.float32(3)) != x
    assert float((rewards[0] - rewards[0].mean()).abs().max()) > 0
    assert torch.equal(ns["group_advantages"](rewards)[:3], torch.zeros(3, 3))
    eps_only = _mistake("group_advantages", "no-zero-for-equal", ns)(rewards)
    assert float(eps_only[0].abs().min()) > 1e-3  # far outside the 1e-6 tolerance


def test_unlikely_token_case_underflows_log_of_softmax_but_not_log_softmax(ns):
    """A token 200 below the favourite: does log(softmax) give -inf where the reference
    (log_softmax) stays finite, -200 plus the second token's log probability?"""
    logits, tokens, mask = _case_args("sequence_logprobs", "unlikely-token")
    got = ns["sequence_logprobs"](logits, tokens, mask)
    want = -200 + float(torch.log_softmax(torch.tensor([3.0, -1.0, 0.5]), 0)[2])
    assert float(got[0]) == pytest.approx(want, rel=1e-6)
    wrong = _mistake("sequence_logprobs", "log-of-softmax", ns)(logits, tokens, mask)
    assert float(wrong[0]) == float("-inf")


def test_common_mistakes_table_numbers_of_the_new_mistakes(ns):
    """Do the new mistakes give the numbers the notebook's table quotes: RLOO ±0.667 for
    (1, 0, 0, 1), the diluted mean 0.0833 and a percentage 50 on the docstrings' examples?"""
    rloo = _mistake("group_advantages", "rloo-baseline", ns)(torch.tensor([[1.0, 0.0, 0.0, 1.0]]))
    assert torch.allclose(rloo, torch.tensor([[2, -2, -2, 2]]) / 3)
    example = (
        torch.tensor([-3.0, -5.0, -4.0]),
        torch.tensor([-2.5, -6.0, -4.25]),
        torch.tensor([True, False, True]),
    )
    assert _mistake("likelihood_change", "diluted-mean", ns)(*example) == pytest.approx(0.25 / 3)
    percent = _mistake("lld_rate", "percent", ns)(torch.tensor([-0.2, 0.0, 0.1, 0.3]))
    assert percent == pytest.approx(50.0)
