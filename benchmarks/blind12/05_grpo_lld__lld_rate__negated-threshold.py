"""Slip: compares each change with -eps (change <= -eps, reading eps as a tolerance for a decrease) instead of with eps; the default eps = 0 hides it."""

import math

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got {x.dim()}-D")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or +-inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite values")


def lld_rate(changes, eps=0.0):
    """Fraction of groups with lazy likelihood displacement: change <= eps (Def. 4.1)."""
    _require_tensor(changes, "changes", 1)
    if changes.numel() == 0:
        raise ValueError("changes is empty")
    _require_finite(changes, "changes")
    if not math.isfinite(eps):
        raise ValueError("eps must be finite")
    return float((changes <= -eps).float().mean())
