"""
notebook: 07_beyond_nthr
function: thr_weights
slip: p is checked with isinstance(p, (int, float)) only, and bool is a subclass of int, so p = True (or False) is accepted as 1 (or 0) instead of raising ValueError as the text asks.
"""

import math

import torch


def thr_weights(thr, dominant, p):
    """THR advantage weights: 1 + p * sign(THR) on dominant tokens, 1 elsewhere."""
    if not isinstance(thr, torch.Tensor) or thr.dim() != 1:
        raise ValueError("thr must be a 1-D torch tensor")
    if not isinstance(dominant, torch.Tensor) or dominant.dim() != 1:
        raise ValueError("dominant must be a 1-D torch tensor")
    if thr.shape[0] != dominant.shape[0]:
        raise ValueError("thr and dominant differ in length")
    if not thr.is_floating_point() or not torch.isfinite(thr).all():
        raise ValueError("thr must be a finite floating tensor")
    if dominant.dtype != torch.bool:
        raise ValueError("dominant must be bool")
    if not isinstance(p, (int, float)) or math.isnan(p) or not -1 <= p <= 1:
        raise ValueError("p must be a number in [-1, 1]")
    w = 1.0 + p * torch.sign(thr)
    return torch.where(dominant, w, torch.ones_like(thr))
