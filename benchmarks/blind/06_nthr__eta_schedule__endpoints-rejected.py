"""
notebook: 06_nthr
function: eta_schedule
slip: the range check is exclusive (0 < p < 1), so success rates of exactly 0 or 1 (all wrong or all right, which the text allows) raise ValueError instead of giving eta = 1.
"""

import math

import torch


def eta_schedule(success_rate):
    """eta = 2 * |0.5 - p| for a group with success rate p."""
    if isinstance(success_rate, torch.Tensor):
        if not success_rate.is_floating_point():
            raise ValueError("success_rate must be a floating tensor")
        if torch.isnan(success_rate).any():
            raise ValueError("success_rate holds NaN")
        if ((success_rate <= 0) | (success_rate >= 1)).any():
            raise ValueError("success_rate must lie strictly between 0 and 1")
        return 2.0 * (0.5 - success_rate).abs()
    p = float(success_rate)
    if math.isnan(p) or not (0.0 < p < 1.0):
        raise ValueError("success_rate must lie strictly between 0 and 1")
    return 2.0 * abs(0.5 - p)
