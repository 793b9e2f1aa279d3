"""Slip: the group mean and std are taken without keepdim=True, so the (n_groups,) statistics
broadcast along the response axis instead of per row: right for a single group, a shape error for
most batches, and silently wrong when n_groups == G."""

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
        raise ValueError(f"{name} holds NaN or infinite values")


def group_advantages(rewards, eps=1e-6):
    """GRPO advantages: each reward standardized within its group."""
    _require_tensor(rewards, "rewards", 2)
    if rewards.shape[1] < 2:
        raise ValueError("G must be >= 2")
    if (
        isinstance(eps, bool)
        or not isinstance(eps, (int, float))
        or not math.isfinite(eps)
        or eps < 0
    ):
        raise ValueError("eps must be a finite number >= 0")
    r = rewards.detach()
    if not r.is_floating_point():
        r = r.to(torch.float32)
    _require_finite(r, "rewards")
    mean = r.mean(dim=1)
    std = r.std(dim=1)
    equal = (r == r[:, :1]).all(dim=1, keepdim=True)
    with torch.no_grad():
        adv = (r - mean) / (std + eps)
    return torch.where(equal, torch.zeros_like(r), adv)
