"""notebook: 05_grpo_lld
function: group_advantages
slip: a group counts as "all rewards equal" when its max − min is at most eps (a tolerance test) instead of when its rewards are exactly equal, so a group with a spread smaller than eps (or every group when eps is large) gets zeros."""

import math

import torch


def _require_tensor(x, name, ndim):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def group_advantages(rewards, eps=1e-6):
    _require_tensor(rewards, "rewards", 2)
    if rewards.shape[1] < 2:
        raise ValueError("a group needs G >= 2 responses")
    if (
        not isinstance(eps, (int, float))
        or isinstance(eps, bool)
        or not math.isfinite(eps)
        or eps < 0
    ):
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
    r = rewards.detach()
    if not r.is_floating_point():
        r = r.float()
    _require_finite(r, "rewards")
    mean = r.mean(dim=1, keepdim=True)
    std = r.std(dim=1, keepdim=True)
    spread = r.max(dim=1, keepdim=True).values - r.min(dim=1, keepdim=True).values
    equal = spread <= eps
    safe = torch.where(equal, torch.ones_like(std), std + eps)
    return torch.where(equal, torch.zeros_like(r), (r - mean) / safe)
