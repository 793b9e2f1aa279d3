"""
notebook: 05_grpo_lld
function: group_advantages
slip: divides by the Bessel-corrected variance plus eps (sum of squared deviations / (G - 1), the square root forgotten) instead of by the standard deviation plus eps.
"""

import math

import torch


def _require_tensor(x, name, ndim):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got {x.dim()}-D")


def _require_finite(x, name):
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def group_advantages(rewards, eps=1e-6):
    _require_tensor(rewards, "rewards", 2)
    if rewards.shape[1] < 2:
        raise ValueError("need G >= 2 responses per group")
    if (
        isinstance(eps, bool)
        or not isinstance(eps, (int, float))
        or not math.isfinite(eps)
        or eps < 0
    ):
        raise ValueError("eps must be a finite float >= 0")
    r = rewards.detach()
    if not r.is_floating_point():
        r = r.float()
    _require_finite(r, "rewards")
    G = r.shape[1]
    mean = r.mean(dim=1, keepdim=True)
    centered = r - mean
    spread = (centered**2).sum(dim=1, keepdim=True) / (G - 1)
    adv = centered / (spread + eps)
    equal = (r == r[:, :1]).all(dim=1, keepdim=True)
    return torch.where(equal, torch.zeros_like(adv), adv)
