"""Slip: uses sign(THR) clamped at 0 (only positive-THR dominant tokens are reweighted) instead of the full sign, so with p > 0 the negative-THR tokens are not weakened and with p < 0 they are not amplified."""

import math

import torch


def thr_weights(thr, dominant, p):
    """THR advantage weights: 1 + p · sign(THR) on dominant tokens, 1 elsewhere."""
    for name, x in (("thr", thr), ("dominant", dominant)):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{name} must be a 1-D torch tensor")
    if thr.shape != dominant.shape:
        raise ValueError("thr and dominant have different lengths")
    if not thr.is_floating_point() or not torch.isfinite(thr).all():
        raise ValueError("thr must be finite floats")
    if dominant.dtype != torch.bool:
        raise ValueError("dominant must be a bool tensor")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or math.isnan(p) or not -1 <= p <= 1:
        raise ValueError("p must be a number in [-1, 1]")
    sign = torch.sign(thr).clamp(min=0)
    return torch.where(dominant, 1 + p * sign, torch.ones_like(thr))
