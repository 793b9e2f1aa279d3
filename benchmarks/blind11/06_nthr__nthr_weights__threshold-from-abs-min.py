"""Slip: takes tau = beta * min(|pos_mean_scores|) (the smallest score in magnitude) instead of
beta * min(pos_mean_scores), which differs as soon as a correct response's mean score is
negative.
"""

import math

import torch


def nthr_weights(neg_scores, pos_mean_scores, beta=1.0, eta=0.0):
    """NTHR's advantage weights for the tokens of incorrect responses."""
    for x, name in ((neg_scores, "neg_scores"), (pos_mean_scores, "pos_mean_scores")):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite entries")
    if pos_mean_scores.dim() != 1 or pos_mean_scores.numel() == 0:
        raise ValueError("pos_mean_scores must be a non-empty 1-D tensor")
    if (
        isinstance(beta, bool)
        or not isinstance(beta, (int, float))
        or not math.isfinite(beta)
        or beta < 0
    ):
        raise ValueError(f"beta must be a finite number >= 0, got {beta}")
    if isinstance(eta, bool) or not isinstance(eta, (int, float)) or not 0 <= eta <= 1:
        raise ValueError(f"eta must be in [0, 1], got {eta}")
    tau = beta * pos_mean_scores.abs().min()
    selected = neg_scores > tau
    return torch.where(selected, torch.full_like(neg_scores, eta), torch.ones_like(neg_scores))
