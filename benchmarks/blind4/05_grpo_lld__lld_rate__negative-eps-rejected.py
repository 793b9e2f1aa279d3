"""notebook: 05_grpo_lld
function: lld_rate
slip: a negative eps is rejected with ValueError (eps read as a tolerance that must be >= 0), although any finite eps is a valid threshold."""

import math

import torch


def lld_rate(changes, eps=0.0):
    if not isinstance(changes, torch.Tensor):
        raise ValueError("changes must be a torch tensor")
    if changes.dim() != 1:
        raise ValueError(f"changes must be 1-D, got shape {tuple(changes.shape)}")
    if changes.numel() == 0:
        raise ValueError("changes is empty")
    if not torch.isfinite(changes).all():
        raise ValueError("changes hold NaN or inf")
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps}")
    return float((changes <= eps).float().mean())
