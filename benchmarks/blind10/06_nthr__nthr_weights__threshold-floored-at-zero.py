"""Slip: floors the threshold at 0 (τ = β · max(min s̄⁺, 0), "so a negative τ cannot select every token") instead of τ = β · min s̄⁺, so when the least aligned correct response has a negative mean score, negative tokens with scores between τ and 0 are no longer selected."""

import math

import torch


def nthr_weights(neg_scores, pos_mean_scores, beta=1.0, eta=0.0):
    """NTHR's advantage weights for the tokens of incorrect responses."""
    for name, x in (("neg_scores", neg_scores), ("pos_mean_scores", pos_mean_scores)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or inf")
    if pos_mean_scores.dim() != 1 or pos_mean_scores.numel() == 0:
        raise ValueError("pos_mean_scores must be a non-empty 1-D tensor")
    if (
        isinstance(beta, bool)
        or not isinstance(beta, (int, float))
        or not math.isfinite(beta)
        or beta < 0
    ):
        raise ValueError("beta must be a finite number >= 0")
    if isinstance(eta, bool) or not isinstance(eta, (int, float)) or not 0 <= eta <= 1:
        raise ValueError("eta must be a number in [0, 1]")
    tau = beta * max(float(pos_mean_scores.min()), 0.0)
    selected = neg_scores > tau
    return torch.where(selected, torch.full_like(neg_scores, eta), torch.ones_like(neg_scores))
