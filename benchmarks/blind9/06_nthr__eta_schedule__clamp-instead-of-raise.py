"""Slip: clamps success rates outside [0, 1] into the range instead of raising ValueError for them
(NaN and integer tensors still raise)."""

import math

import torch


def eta_schedule(success_rate):
    """eta = 2 * |0.5 - p| for a group with success rate p (Deng et al.'s training setting)."""
    if isinstance(success_rate, torch.Tensor):
        if not success_rate.is_floating_point():
            raise ValueError("success_rate must be a floating tensor")
        if torch.isnan(success_rate).any():
            raise ValueError("success_rate holds NaN")
        p = success_rate.clamp(0.0, 1.0)
        return 2.0 * (0.5 - p).abs()
    if isinstance(success_rate, bool) or not isinstance(success_rate, (int, float)):
        raise ValueError("success_rate must be a float or a float tensor")
    if math.isnan(success_rate):
        raise ValueError("success_rate is NaN")
    p = min(1.0, max(0.0, float(success_rate)))
    return 2.0 * abs(0.5 - p)
