"""Slip: rescales the weights so that their mean over the group's tokens is 1 (to "keep the loss
scale"), instead of returning 1 + p·sign(THR) on dominant tokens and 1 elsewhere as they are.
"""

import math

import torch


def thr_weights(thr, dominant, p):
    """THR advantage weights: 1 + p · sign(THR) on dominant tokens, 1 elsewhere."""
    for name, x in (("thr", thr), ("dominant", dominant)):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{name} must be a 1-D torch tensor")
    if thr.shape != dominant.shape:
        raise ValueError("thr and dominant must have the same length")
    if not thr.is_floating_point() or not torch.isfinite(thr).all():
        raise ValueError("thr must be a finite floating tensor")
    if dominant.dtype != torch.bool:
        raise ValueError("dominant must be a bool tensor")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or math.isnan(p) or not -1 <= p <= 1:
        raise ValueError(f"p must be an int or float in [-1, 1], got {p!r}")
    w = torch.where(dominant, 1 + p * torch.sign(thr), torch.ones_like(thr))
    return w / w.mean()
