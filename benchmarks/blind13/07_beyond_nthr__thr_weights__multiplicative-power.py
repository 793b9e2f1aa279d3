"""Slip: uses the multiplicative weight (1 + p) ** sign(THR) on dominant tokens instead of the additive 1 + p * sign(THR), so the down-weighted side gets 1 / (1 + p) instead of 1 - p."""

import math

import torch


def _require(x, name, ndim, kind):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions, of `kind` "float" or "bool"."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")  # noqa: TRY004 (the contract asks for ValueError)
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D")
    if kind == "float":
        if not torch.is_floating_point(x):
            raise ValueError(f"{name} must be floating")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or inf")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be bool")


def thr_weights(thr, dominant, p):
    """THR advantage weights: 1 + p * sign(THR) on dominant tokens, 1 elsewhere."""
    _require(thr, "thr", 1, "float")
    _require(dominant, "dominant", 1, "bool")
    if thr.shape != dominant.shape:
        raise ValueError("lengths differ")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or math.isnan(p) or not -1 <= p <= 1:
        raise ValueError("p must be a number in [-1, 1]")
    w = (1.0 + p) ** torch.sign(thr)
    return torch.where(dominant, w, torch.ones_like(thr))
