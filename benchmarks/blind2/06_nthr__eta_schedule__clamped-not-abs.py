"""
notebook: 06_nthr
function: eta_schedule
slip: uses max(0, 2 * (0.5 - p)) (clamped at 0 to stay in [0, 1]) instead of 2 * |0.5 - p|, so every group with success rate above 0.5 gets eta = 0.
"""

import math

import torch


def eta_schedule(success_rate):
    if isinstance(success_rate, torch.Tensor):
        if not success_rate.is_floating_point():
            raise ValueError("success_rate must be a floating tensor")
        if torch.isnan(success_rate).any():
            raise ValueError("success_rate holds NaN")
        if ((success_rate < 0) | (success_rate > 1)).any():
            raise ValueError("success_rate must be in [0, 1]")
        return torch.clamp(2.0 * (0.5 - success_rate), min=0.0)
    if isinstance(success_rate, bool) or not isinstance(success_rate, (int, float)):
        raise ValueError("success_rate must be a float or a float tensor")
    p = float(success_rate)
    if math.isnan(p) or p < 0.0 or p > 1.0:
        raise ValueError("success_rate must be in [0, 1]")
    return max(0.0, 2.0 * (0.5 - p))
