"""Slip: for a tensor input takes its mean as the group's success rate and returns one η = 2·|0.5 −
mean| (as if the tensor held one group's per-response rewards) instead of η elementwise with the
input's shape.
"""

import math

import torch


def eta_schedule(success_rate):
    """η = 2 · |0.5 − p| for a group with success rate p (Deng et al.'s training setting)."""
    if isinstance(success_rate, torch.Tensor):
        if not success_rate.is_floating_point():
            raise ValueError("success_rate must be a floating tensor")
        if torch.isnan(success_rate).any() or ((success_rate < 0) | (success_rate > 1)).any():
            raise ValueError("success_rate values must lie in [0, 1]")
        p = success_rate.mean()
        return 2 * (0.5 - p).abs()
    if isinstance(success_rate, bool) or not isinstance(success_rate, (int, float)):
        raise ValueError(
            f"success_rate must be a float or a float tensor, got {type(success_rate).__name__}"
        )
    if math.isnan(success_rate) or not 0 <= success_rate <= 1:
        raise ValueError(f"success_rate must lie in [0, 1], got {success_rate!r}")
    return 2 * abs(0.5 - success_rate)
