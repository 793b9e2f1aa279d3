"""notebook: 05_grpo_lld
function: group_advantages
slip: detects a group of equal rewards by std == 0 instead of comparing the rewards themselves, so equal rewards whose float32 mean is a rounding error off (std tiny but not 0) get nonzero advantages."""

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
        raise ValueError("eps must be a finite number >= 0")
    r = rewards.detach()
    if not r.is_floating_point():
        r = r.to(torch.float32)
    _require_finite(r, "rewards")
    mean = r.mean(dim=1, keepdim=True)
    std = r.std(dim=1, keepdim=True)
    flat = std == 0
    adv = (r - mean) / (std + eps)
    return torch.where(flat, torch.zeros_like(adv), adv)
