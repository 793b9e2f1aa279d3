"""
notebook: 05_grpo_lld
function: lld_rate
slip: eps is required to be >= 0 and a negative threshold raises ValueError, although the text only asks that eps be finite (a negative eps counts only clear decreases).
"""

import math

import torch


def lld_rate(changes, eps=0.0):
    """Fraction of groups with change <= eps."""
    if not isinstance(changes, torch.Tensor) or changes.dim() != 1:
        raise ValueError("changes must be a 1-D tensor")
    if changes.numel() == 0:
        raise ValueError("no groups")
    if not torch.isfinite(changes).all():
        raise ValueError("changes must be finite")
    if not math.isfinite(eps) or eps < 0:
        raise ValueError("eps must be a finite tolerance >= 0")
    return float((changes <= eps).float().mean())
