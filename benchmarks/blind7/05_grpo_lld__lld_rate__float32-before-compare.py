"""Slip: the changes are cast to float32 (.float()) before the comparison with eps, so float64
changes just above eps (or tiny positive changes that underflow to 0) round onto the threshold and
are counted as LLD, instead of comparing the values as given."""

import math

import torch


def lld_rate(changes, eps=0.0):
    """Fraction of groups with lazy likelihood displacement: change <= eps (Def. 4.1)."""
    if not isinstance(changes, torch.Tensor):
        raise ValueError("changes must be a torch tensor")
    if changes.dim() != 1:
        raise ValueError("changes must be 1-D")
    if changes.numel() == 0:
        raise ValueError("changes is empty")
    if not changes.is_floating_point():
        raise ValueError("changes must be floating")
    if not torch.isfinite(changes).all():
        raise ValueError("changes hold NaN or infinite values")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps):
        raise ValueError("eps must be a finite number")
    c = changes.detach().float()
    return float((c <= eps).float().mean())
