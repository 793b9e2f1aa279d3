"""
notebook: 06_nthr
function: nthr_weights
slip: gives the selected tokens weight 1 - eta (eta read as how much to remove) instead of eta; the threshold and selection are right.
"""

import math

import torch


def nthr_weights(neg_scores, pos_mean_scores, beta=1.0, eta=0.0):
    if not isinstance(neg_scores, torch.Tensor) or not isinstance(pos_mean_scores, torch.Tensor):
        raise ValueError("scores must be torch tensors")
    if not neg_scores.is_floating_point() or not pos_mean_scores.is_floating_point():
        raise ValueError("scores must be floating tensors")
    if pos_mean_scores.dim() != 1 or pos_mean_scores.numel() == 0:
        raise ValueError("pos_mean_scores must be a non-empty 1-D tensor")
    if not torch.isfinite(neg_scores).all() or not torch.isfinite(pos_mean_scores).all():
        raise ValueError("scores hold NaN or inf")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    if not (0.0 <= eta <= 1.0):
        raise ValueError("eta must be in [0, 1]")
    tau = beta * pos_mean_scores.min()
    selected = neg_scores > tau
    soft = torch.full_like(neg_scores, 1.0 - eta)
    return torch.where(selected, soft, torch.ones_like(neg_scores))
