"""Slip: a token is selected when the absolute value of its score exceeds τ (|s⁻| > τ, the dominance
rule of token hidden reward) instead of the signed score s⁻ > τ, so strongly negative scores, which
help the correct responses, are softened too."""

import math

import torch


def nthr_weights(neg_scores, pos_mean_scores, beta=1.0, eta=0.0):
    """NTHR's advantage weights for the tokens of incorrect responses."""
    for name, x in (("neg_scores", neg_scores), ("pos_mean_scores", pos_mean_scores)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if not x.is_floating_point():
            raise ValueError(f"{name} must be floating")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite values")
    if pos_mean_scores.dim() != 1 or pos_mean_scores.numel() == 0:
        raise ValueError("pos_mean_scores must be 1-D and non-empty")
    if (
        isinstance(beta, bool)
        or not isinstance(beta, (int, float))
        or not math.isfinite(beta)
        or beta < 0
    ):
        raise ValueError("beta must be a finite number >= 0")
    if isinstance(eta, bool) or not isinstance(eta, (int, float)) or not (0.0 <= eta <= 1.0):
        raise ValueError("eta must be in [0, 1]")
    tau = beta * pos_mean_scores.detach().min()
    s = neg_scores.detach()
    selected = s.abs() > tau
    return torch.where(selected, torch.full_like(s, eta), torch.ones_like(s))
