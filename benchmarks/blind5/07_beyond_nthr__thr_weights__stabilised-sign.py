"""notebook: 07_beyond_nthr
function: thr_weights
slip: sign(THR) is computed as THR / (|THR| + 1e-8), a "safe sign" with a stabiliser, so a dominant token with a small THR (around 1e-8 or below) gets a weight between 1 and 1 ± p instead of exactly 1 ± p."""

import math

import torch


def _require(x, name, ndim, kind):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions, of `kind`
    "float" (floating point, no NaN or ±inf) or "bool"."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")
    if kind == "float":
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor, got {x.dtype}")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite values")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be a bool tensor, got {x.dtype}")


def thr_weights(thr, dominant, p):
    """THR advantage weights: 1 + p · sign(THR) on dominant tokens, 1 elsewhere."""
    _require(thr, "thr", 1, "float")
    _require(dominant, "dominant", 1, "bool")
    if thr.shape != dominant.shape:
        raise ValueError("thr and dominant must have the same length")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or math.isnan(p) or not -1 <= p <= 1:
        raise ValueError(f"p must be an int or float in [-1, 1], got {p!r}")
    thr = thr.detach()
    sign = thr / (thr.abs() + 1e-8)
    return torch.where(dominant, 1 + p * sign, torch.ones_like(thr))
