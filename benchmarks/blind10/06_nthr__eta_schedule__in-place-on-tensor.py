"""Slip: for a tensor, computes η with in-place operations on the caller's tensor (sub_, abs_, mul_) and returns it, so the values are right but the success rates passed in are overwritten with η."""

import math

import torch


def eta_schedule(success_rate):
    """η = 2 · |0.5 − p| for a group with success rate p (Deng et al.'s training setting)."""
    if isinstance(success_rate, torch.Tensor):
        if not success_rate.is_floating_point():
            raise ValueError("success_rate must be a floating tensor")
        if torch.isnan(success_rate).any() or ((success_rate < 0) | (success_rate > 1)).any():
            raise ValueError("success_rate must be in [0, 1]")
        return success_rate.sub_(0.5).abs_().mul_(2.0)
    if isinstance(success_rate, bool) or not isinstance(success_rate, (int, float)):
        raise ValueError("success_rate must be a float or a float tensor")
    if math.isnan(success_rate) or not 0.0 <= success_rate <= 1.0:
        raise ValueError("success_rate must be in [0, 1]")
    return 2.0 * abs(0.5 - success_rate)
