"""Slip: the mean is taken over each group (dim=1) but the standard deviation over dim=0 (across groups, per column), so a single group gets NaN and several groups get a std that mixes prompts."""

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


def group_advantages(rewards, eps=1e-6):
    """GRPO advantages: each reward standardized within its group."""
    _require_tensor(rewards, "rewards", 2)
    if rewards.shape[1] < 2:
        raise ValueError("G must be >= 2")
    if (
        not isinstance(eps, (int, float))
        or isinstance(eps, bool)
        or not math.isfinite(eps)
        or eps < 0
    ):
        raise ValueError("eps must be a finite number >= 0")
    r = rewards.detach()
    r = r.float() if not torch.is_floating_point(r) else r
    _require_finite(r, "rewards")
    mean = r.mean(dim=1, keepdim=True)
    std = r.std(dim=0, keepdim=True)
    adv = (r - mean) / (std + eps)
    equal = (r == r[:, :1]).all(dim=1, keepdim=True)
    return torch.where(equal, torch.zeros_like(adv), adv)
