"""
notebook: 05_grpo_lld
function: group_advantages
slip: the mean is taken per group (dim=1) but the std over dim=0, i.e. per response position across the prompts of the batch, instead of within each group.
"""

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
    """GRPO advantages: each reward standardized within its group."""
    _require_tensor(rewards, "rewards", 2)
    if rewards.shape[1] < 2:
        raise ValueError("need G >= 2 responses per group")
    if (
        not isinstance(eps, (int, float))
        or isinstance(eps, bool)
        or not math.isfinite(eps)
        or eps < 0
    ):
        raise ValueError("eps must be a finite float >= 0")
    r = rewards.detach()
    if not r.is_floating_point():
        r = r.to(torch.float32)
    _require_finite(r, "rewards")
    mean = r.mean(dim=1, keepdim=True)
    std = r.std(dim=0, keepdim=True)
    adv = (r - mean) / (std + eps)
    equal = (r == r[:, :1]).all(dim=1, keepdim=True)
    return torch.where(equal, torch.zeros_like(adv), adv)
