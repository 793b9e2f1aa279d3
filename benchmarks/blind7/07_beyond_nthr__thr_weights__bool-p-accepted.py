"""Slip (input validation only): p is checked with isinstance(p, (int, float)), which a bool passes,
so p = True is taken as 1 (and False as 0) instead of raising ValueError as the text asks."""

import math

import torch


def thr_weights(thr, dominant, p):
    """THR advantage weights: 1 + p · sign(THR) on dominant tokens, 1 elsewhere."""
    for name, x in (("thr", thr), ("dominant", dominant)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if x.dim() != 1:
            raise ValueError(f"{name} must be 1-D")
    if thr.shape[0] != dominant.shape[0]:
        raise ValueError("thr and dominant have different lengths")
    if not thr.is_floating_point():
        raise ValueError("thr must be floating")
    if not torch.isfinite(thr).all():
        raise ValueError("thr holds NaN or infinite values")
    if dominant.dtype != torch.bool:
        raise ValueError("dominant must be bool")
    if not isinstance(p, (int, float)) or not math.isfinite(p) or not -1.0 <= p <= 1.0:
        raise ValueError("p must be a number in [-1, 1]")
    t = thr.detach()
    w = 1.0 + float(p) * torch.sign(t)
    return torch.where(dominant, w, torch.ones_like(t))
