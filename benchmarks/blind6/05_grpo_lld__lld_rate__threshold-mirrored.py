"""notebook: 05_grpo_lld
function: lld_rate
slip: counts the changes <= −eps (a margin below zero) instead of <= eps, which agrees only for eps = 0."""

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
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def lld_rate(changes, eps=0.0):
    _require_tensor(changes, "changes", 1)
    if changes.numel() == 0:
        raise ValueError("changes is empty")
    _require_finite(changes, "changes")
    if not math.isfinite(eps):
        raise ValueError("eps must be finite")
    return float((changes <= -eps).double().mean())
