"""Slip: detects an all-equal group by its computed std being exactly 0 instead of comparing the
rewards themselves, so float32 rounding (three 0.85s) leaves a tiny nonzero std and the group
gets nonzero advantages (about 0.056 in size) instead of zeros.
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


def group_advantages(rewards, eps=1e-6):
    """GRPO advantages: each reward standardized within its group."""
    _require_tensor(rewards, "rewards", 2)
    if rewards.shape[1] < 2:
        raise ValueError(f"need G >= 2 responses per group, got {rewards.shape[1]}")
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be a finite number >= 0, got {eps}")
    r = rewards.detach()
    if not r.is_floating_point():
        r = r.float()
    _require_finite(r, "rewards")
    mean = r.mean(dim=1, keepdim=True)
    std = r.std(dim=1, keepdim=True)
    adv = (r - mean) / (std + eps)
    return torch.where(std == 0, torch.zeros_like(adv), adv)
