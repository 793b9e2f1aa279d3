"""Slip: multiplies the negative scores by beta and compares them with min(pos_mean_scores), instead of comparing the scores with tau = beta * min(pos_mean_scores)."""

import math

import torch


def nthr_weights(neg_scores, pos_mean_scores, beta=1.0, eta=0.0):
    """NTHR's advantage weights for the tokens of incorrect responses."""
    for name, x in (("neg_scores", neg_scores), ("pos_mean_scores", pos_mean_scores)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if not torch.is_floating_point(x):
            raise ValueError(f"{name} must be floating")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite values")
    if pos_mean_scores.dim() != 1 or pos_mean_scores.numel() == 0:
        raise ValueError("pos_mean_scores must be a non-empty 1-D tensor")
    if not isinstance(beta, (int, float)) or not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    if not isinstance(eta, (int, float)) or not 0 <= eta <= 1:
        raise ValueError("eta must be in [0, 1]")
    selected = beta * neg_scores > pos_mean_scores.min()
    return torch.where(
        selected, torch.full_like(neg_scores, float(eta)), torch.ones_like(neg_scores)
    )
