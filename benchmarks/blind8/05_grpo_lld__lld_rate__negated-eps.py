"""Slip: counts the groups whose change is <= −eps (reading eps as a required drop) instead of <=
eps; identical at the default eps = 0, wrong for any other eps.
"""

import math

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or ±inf."""
    if x.is_floating_point() and not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite values")


def lld_rate(changes, eps=0.0):
    """Fraction of groups with lazy likelihood displacement: change <= eps (Def. 4.1)."""
    _require_tensor(changes, "changes", 1)
    if changes.numel() == 0:
        raise ValueError("changes is empty")
    _require_finite(changes, "changes")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps):
        raise ValueError(f"eps must be a finite number, got {eps!r}")
    return float((changes <= -eps).float().mean())
