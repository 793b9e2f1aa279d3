"""notebook: 05_grpo_lld
function: group_advantages
slip: detects the no-signal groups with std < eps instead of testing the rewards for equality, so with eps = 0 an all-equal group is never caught and gives 0/0 = NaN."""

import math

import torch


def _require_tensor(x, name, ndim):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or an infinite value")


def group_advantages(rewards, eps=1e-6):
    _require_tensor(rewards, "rewards", 2)
    if rewards.shape[1] < 2:
        raise ValueError(f"a group needs G >= 2 responses, got {rewards.shape[1]}")
    if (
        isinstance(eps, bool)
        or not isinstance(eps, (int, float))
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
    adv = (r - mean) / (std + eps)
    return torch.where(std < eps, torch.zeros_like(adv), adv)
