"""notebook: 06_nthr
function: nthr_weights
slip: selected tokens get weight 1 − eta (eta read as the fraction of the advantage removed) instead of weight eta."""

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
            raise ValueError(f"{name} holds NaN or infinite values")
    if pos_mean_scores.dim() != 1 or pos_mean_scores.numel() == 0:
        raise ValueError("pos_mean_scores must be a non-empty 1-D tensor")
    for v, name in ((beta, "beta"), (eta, "eta")):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if beta < 0:
        raise ValueError(f"beta must be >= 0, got {beta}")
    if not 0 <= eta <= 1:
        raise ValueError(f"eta must be in [0, 1], got {eta}")
    tau = beta * pos_mean_scores.min()
    selected = neg_scores > tau
    ones = torch.ones_like(neg_scores)
    return torch.where(selected, ones * (1 - eta), ones)
