"""
notebook: 05_grpo_lld
function: lld_rate
slip: counts a group when its change is <= -eps (eps read as a tolerance on the decrease) instead of <= eps; the two agree only at eps = 0.
"""

import math

import torch


def lld_rate(changes, eps=0.0):
    if not isinstance(changes, torch.Tensor) or changes.dim() != 1:
        raise ValueError("changes must be a 1-D tensor")
    if changes.numel() == 0:
        raise ValueError("changes is empty")
    if not torch.isfinite(changes).all():
        raise ValueError("changes hold NaN or inf")
    if not math.isfinite(float(eps)):
        raise ValueError("eps must be finite")
    displaced = changes <= -eps
    return displaced.float().mean().item()
