"""Slip: counts a change as LLD when it is <= eps + 1e-6 (a float "safety" tolerance) instead of <=
eps, so small positive changes of the size the probe produces are counted as displacement.
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
    """Raise ValueError if the floating tensor x holds NaN or +-inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite entries")


def lld_rate(changes, eps=0.0):
    """Fraction of groups with lazy likelihood displacement: change <= eps (Def. 4.1)."""
    _require_tensor(changes, "changes", 1)
    if changes.numel() == 0:
        raise ValueError("changes is empty")
    if not changes.is_floating_point():
        changes = changes.float()
    _require_finite(changes, "changes")
    if not math.isfinite(eps):
        raise ValueError(f"eps must be finite, got {eps}")
    return float((changes <= eps + 1e-6).float().mean())
