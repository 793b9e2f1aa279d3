"""notebook: 07_beyond_nthr
function: thr_weights
slip: gives the non-dominant tokens weight 0 (the masking reading of the method) instead of weight 1."""

import math

import torch


def thr_weights(thr, dominant, p):
    for name, x in (("thr", thr), ("dominant", dominant)):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{name} must be a 1-D torch tensor")
    if thr.shape != dominant.shape:
        raise ValueError("thr and dominant have different lengths")
    if not thr.is_floating_point() or not torch.isfinite(thr).all():
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
    w = 1 + p * torch.sign(thr)
    return torch.where(dominant, w, torch.zeros_like(w))
