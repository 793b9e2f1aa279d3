"""Slip: validates the success rate with strict bounds 0 < p < 1, so the legal rates 0 and 1
(groups all wrong or all right) raise ValueError instead of giving eta = 1.
"""

import math

import torch


def eta_schedule(success_rate):
    """eta = 2 * |0.5 - p| for a group with success rate p (Deng et al.'s training setting)."""
    if isinstance(success_rate, torch.Tensor):
        if not success_rate.is_floating_point():
            raise ValueError("success_rate must be a floating tensor")
        if torch.isnan(success_rate).any() or not ((success_rate > 0) & (success_rate < 1)).all():
            raise ValueError("success rates must lie in (0, 1)")
        return 2 * (0.5 - success_rate).abs()
    p = float(success_rate)
    if math.isnan(p) or not 0 < p < 1:
        raise ValueError(f"success rate must lie in (0, 1), got {success_rate}")
    return 2 * abs(0.5 - p)
