"""notebook: 07_beyond_nthr
function: thr_weights
slip: p is required to be a Python float, so an int p in [−1, 1] (0, 1, −1), which the text allows, raises ValueError."""

import math

import torch


def thr_weights(thr, dominant, p):
    for name, x in (("thr", thr), ("dominant", dominant)):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{name} must be a 1-D torch tensor")
    if thr.shape[0] != dominant.shape[0]:
        raise ValueError("thr and dominant have different lengths")
    if not thr.is_floating_point() or not torch.isfinite(thr).all():
        raise ValueError("thr must be a finite floating tensor")
    if dominant.dtype != torch.bool:
        raise ValueError("dominant must be a bool tensor")
    if not isinstance(p, float) or not math.isfinite(p) or not -1 <= p <= 1:
        raise ValueError(f"p must be a float in [-1, 1], got {p!r}")
    w = 1 + p * torch.sign(thr.detach())
    return torch.where(dominant, w, torch.ones_like(w))
