"""Slip: divides the weights by their mean (renormalising them to average 1, as importance weights often are), instead of returning 1 + p * sign(THR) on dominant tokens and 1 elsewhere."""

import math

import torch


def thr_weights(thr, dominant, p):
    """THR advantage weights: 1 + p * sign(THR) on dominant tokens, 1 elsewhere."""
    for name, x in (("thr", thr), ("dominant", dominant)):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{name} must be a 1-D torch tensor")
    if thr.shape != dominant.shape:
        raise ValueError("thr and dominant have different lengths")
    if not torch.is_floating_point(thr) or not torch.isfinite(thr).all():
        raise ValueError("thr must be floating and finite")
    if dominant.dtype != torch.bool:
        raise ValueError("dominant must be bool")
    if (
        isinstance(p, bool)
        or not isinstance(p, (int, float))
        or not math.isfinite(p)
        or not -1 <= p <= 1
    ):
        raise ValueError("p must be a number in [-1, 1]")
    w = torch.where(dominant, 1 + p * torch.sign(thr), torch.ones_like(thr))
    return w / w.mean()
