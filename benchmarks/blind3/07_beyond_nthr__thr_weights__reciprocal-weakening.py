"""notebook: 07_beyond_nthr
function: thr_weights
slip: weights dominant tokens by (1 + p) ** sign(THR), i.e. amplifies by 1 + p and weakens by dividing by 1 + p, instead of 1 + p * sign(THR)."""

import math

import torch


def thr_weights(thr, dominant, p):
    if not isinstance(thr, torch.Tensor) or thr.dim() != 1:
        raise ValueError("thr must be a 1-D torch tensor")
    if not isinstance(dominant, torch.Tensor) or dominant.dim() != 1:
        raise ValueError("dominant must be a 1-D torch tensor")
    if thr.shape != dominant.shape:
        raise ValueError("thr and dominant have different lengths")
    if not thr.is_floating_point() or not torch.isfinite(thr).all():
        raise ValueError("thr must be a finite floating tensor")
    if dominant.dtype != torch.bool:
        raise ValueError("dominant must be a bool tensor")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or math.isnan(p) or not -1 <= p <= 1:
        raise ValueError(f"p must be a number in [-1, 1], got {p!r}")
    base = torch.full_like(thr, 1.0 + p)
    w = torch.pow(base, torch.sign(thr))
    return torch.where(dominant, w, torch.ones_like(thr))
