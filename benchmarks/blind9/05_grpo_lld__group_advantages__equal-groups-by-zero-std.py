"""Slip: detects "all rewards equal" by testing std == 0 instead of comparing the rewards
themselves; float32 rewards like 0.85 leave a rounding-error std, so such a group gets
advantages of about +-0.8 (eps = 0) instead of zeros."""

import math

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got {x.dim()}-D")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def group_advantages(rewards, eps=1e-6):
    """GRPO advantages: each reward standardized within its group."""
    _require_tensor(rewards, "rewards", 2)
    if rewards.shape[1] < 2:
        raise ValueError("G must be >= 2")
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps < 0:
        raise ValueError("eps must be finite and >= 0")
    r = rewards.detach()
    if not r.is_floating_point():
        r = r.to(torch.float32)
    _require_finite(r, "rewards")
    mean = r.mean(dim=1, keepdim=True)
    std = r.std(dim=1, keepdim=True)
    adv = (r - mean) / (std + eps)
    return torch.where(std == 0, torch.zeros_like(adv), adv)
