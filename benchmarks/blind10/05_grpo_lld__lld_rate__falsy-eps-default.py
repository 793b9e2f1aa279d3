"""Slip: writes `eps = eps or 1e-6`, so the default eps = 0 is silently replaced by a 1e-6 tolerance and tiny positive changes (0 < change <= 1e-6) are counted as LLD."""

import math

import torch


def lld_rate(changes, eps=0.0):
    """Fraction of groups with lazy likelihood displacement: change <= eps (Def. 4.1)."""
    if not isinstance(changes, torch.Tensor) or changes.dim() != 1:
        raise ValueError("changes must be a 1-D tensor")
    if changes.numel() == 0:
        raise ValueError("changes is empty")
    if not torch.isfinite(changes).all():
        raise ValueError("changes hold NaN or inf")
    if not math.isfinite(eps):
        raise ValueError("eps must be finite")
    eps = eps or 1e-6
    return float((changes <= eps).double().mean())
