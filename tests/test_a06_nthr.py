"""Notebook 06 against brute force, autograd and hand-computed numbers."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import ROOT

from autograder import assignments
from autograder.notebooks import reference
from autograder.scoring import evaluate, kernel

A = "06_nthr"


@pytest.fixture(scope="module")
def ns():
    return reference.namespace(A, ROOT)


def _random_errors(gen, n, v):
    logits = torch.randn(n, v, generator=gen) * 1.5
    tokens = torch.randint(0, v, (n,), generator=gen)
    return torch.nn.functional.one_hot(tokens, v).float() - torch.softmax(logits, -1)


def _double_loop(h_a, err_a, h_b, err_b):
    out = []
    for kp in range(h_a.shape[0]):
        total = 0.0
        for k in range(h_b.shape[0]):
            alpha = sum(float(err_a[kp, v]) * float(err_b[k, v]) for v in range(err_a.shape[1]))
            sim = sum(float(h_a[kp, d]) * float(h_b[k, d]) for d in range(h_a.shape[1]))
            total += alpha * sim
        out.append(total)
    return out


def test_token_scores_agrees_with_a_brute_force_double_loop(ns):
    """On random inputs, does the matrix-product version equal Σ_k α_{k,k′}·⟨h_k, h_k′⟩ looped pair by pair?"""
    gen = torch.Generator().manual_seed(0)
    for na, nb, d, v in ((1, 1, 2, 2), (3, 5, 4, 6), (7, 2, 8, 3), (6, 6, 5, 9)):
        h_a, h_b = torch.randn(na, d, generator=gen), torch.randn(nb, d, generator=gen)
        err_a, err_b = _random_errors(gen, na, v), _random_errors(gen, nb, v)
        got = ns["token_scores"](h_a, err_a, h_b, err_b)
        assert got.shape == (na,)
        assert np.allclose(got.numpy(), _double_loop(h_a, err_a, h_b, err_b), rtol=1e-5, atol=1e-5)


def test_token_scores_is_the_gradient_inner_product_of_a_linear_head(ns):
    """For logits = W h, is the score Σ_k ⟨∇_W ln π(y_k), ∇_W ln π(y′_k′)⟩ (why Eq. 7 measures gradient overlap)?"""
    torch.manual_seed(1)
    d, v = 6, 5
    w = torch.randn(v, d, requires_grad=True)
    h_pos, y_pos = torch.randn(4, d), torch.randint(0, v, (4,))
    h_neg, y_neg = torch.randn(3, d), torch.randint(0, v, (3,))

    def grad_logp(h, y):
        (g,) = torch.autograd.grad(torch.log_softmax(w @ h, -1)[y], w)
        return g  # (V, D) = (e_y − π) hᵀ

    g_pos = [grad_logp(h_pos[k], y_pos[k]) for k in range(4)]
    want = torch.tensor(
        [sum(float((grad_logp(h_neg[j], y_neg[j]) * g).sum()) for g in g_pos) for j in range(3)]
    )
    err = lambda h, y: ns["prediction_errors"]((h @ w.detach().T), y)  # noqa: E731
    got = ns["token_scores"](h_neg, err(h_neg, y_neg), h_pos, err(h_pos, y_pos))
    assert torch.allclose(got, want, rtol=1e-4, atol=1e-5)


def test_prediction_errors_are_the_logit_gradient_of_the_log_likelihood(ns):
    """Is row t the gradient of ln softmax(logits[t])[y_t] with respect to logits[t] (one-hot − softmax)?"""
    torch.manual_seed(2)
    logits = torch.randn(5, 7, requires_grad=True)
    tokens = torch.tensor([0, 6, 3, 3, 1])
    torch.log_softmax(logits, -1).gather(1, tokens[:, None]).sum().backward()
    got = ns["prediction_errors"](logits.detach(), tokens)
    assert torch.allclose(got, logits.grad, atol=1e-6)
    assert torch.allclose(got.sum(1), torch.zeros(5), atol=1e-6)


def test_nthr_weights_threshold_is_beta_times_the_min_and_strict(ns):
    """τ = 0.5 · min(2, 1) = 0.5: is 0.5 itself kept (1), 0.75 selected (η), 0.25 kept?"""
    w = ns["nthr_weights"](
        torch.tensor([0.25, 0.5, 0.75]), torch.tensor([2.0, 1.0]), beta=0.5, eta=0.125
    )
    assert torch.equal(w, torch.tensor([1.0, 1.0, 0.125]))


def test_nthr_weights_default_zeroes_selected_tokens_in_the_probe(ns):
    """With the probe defaults (β = 1, η = 0) is every token above min(s̄⁺) weighted 0 and the rest 1?"""
    s = torch.tensor([[-1.0, 0.9, 1.1], [3.0, 0.0, 1.0]])
    w = ns["nthr_weights"](s, torch.tensor([1.0, 1.5]))
    assert torch.equal(w, (s <= 1.0).float())


def test_eta_schedule_hand_values_and_symmetry(ns):
    """Is η = 0 at p = 0.5, 1 at p = 0 or 1, and the same for p and 1 − p?"""
    p = torch.linspace(0, 1, 9)
    eta = ns["eta_schedule"](p)
    assert torch.allclose(eta, 2 * (0.5 - p).abs())
    assert torch.allclose(eta, ns["eta_schedule"](1 - p), atol=1e-6)
    assert (
        ns["eta_schedule"](0.5) == 0.0
        and ns["eta_schedule"](0.0) == 1.0
        and ns["eta_schedule"](1.0) == 1.0
    )


def test_double_loop_token_scores_gets_full_marks(ns):
    """Would a correct learner who loops over pairs (slow but right) pass the float32 tolerances?"""

    def looped(h_a, err_a, h_b, err_b):
        ns["token_scores"](h_a, err_a, h_b, err_b)  # same validation
        return torch.tensor(_double_loop(h_a, err_a, h_b, err_b), dtype=torch.float32)

    r = kernel.grade_function(A, "token_scores", looped, namespace=ns, root=ROOT)
    assert r.score == r.points, evaluate.feedback_text(r, show_hidden=True)


def test_eta_schedule_mistakes_give_the_numbers_of_the_notebook_table(ns):
    """η = p and η = 1 − p give 0.5 at p = 0.5 (the schedule 0), the squared distance 0.25 at
    p = 0.25 (the schedule 0.5), as the common-mistakes table says?"""
    mistakes = {m.id: m.build(ns) for m in assignments.get(A).function("eta_schedule").mistakes}
    assert ns["eta_schedule"](0.5) == 0.0 and ns["eta_schedule"](0.25) == 0.5
    assert mistakes["eta-p"](0.5) == mistakes["eta-one-minus-p"](0.5) == 0.5
    assert mistakes["squared"](0.25) == pytest.approx(0.25)
