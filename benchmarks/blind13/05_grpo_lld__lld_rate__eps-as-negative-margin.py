"""Slip: counts changes <= -eps (eps read as a margin of displacement below zero) instead of changes <= eps; identical at the default eps = 0, wrong for any other eps."""

import math

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")  # noqa: TRY004 (the contract asks for ValueError)
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def lld_rate(changes, eps=0.0):
    """Fraction of groups with lazy likelihood displacement: change <= eps (Def. 4.1)."""
    _require_tensor(changes, "changes", 1)
    if changes.numel() == 0:
        raise ValueError("changes is empty")
    if not torch.is_floating_point(changes):
        changes = changes.float()
    _require_finite(changes, "changes")
    if not isinstance(eps, (int, float)) or not math.isfinite(eps):
        raise ValueError("eps must be a finite number")
    return float((changes <= -eps).float().mean())
