"""Slip: for a tensor input η is computed with in-place ops on the argument
(p.sub_(0.5).abs_().mul_(2)) and that same tensor is returned, so the caller's success rates are
overwritten by the η values (a second call on them gives a different answer), instead of returning
a new tensor."""

import math

import torch


def eta_schedule(success_rate):
    """η = 2 · |0.5 − p| for a group with success rate p (Deng et al.'s training setting)."""
    if isinstance(success_rate, torch.Tensor):
        if not success_rate.is_floating_point():
            raise ValueError("success_rate must be a floating tensor")
        if torch.isnan(success_rate).any():
            raise ValueError("success_rate holds NaN")
        if ((success_rate < 0) | (success_rate > 1)).any():
            raise ValueError("success_rate outside [0, 1]")
        p = success_rate.detach()
        return p.sub_(0.5).abs_().mul_(2.0)
    if isinstance(success_rate, bool) or not isinstance(success_rate, (int, float)):
        raise ValueError("success_rate must be a float or a float tensor")
    if math.isnan(success_rate) or not 0.0 <= success_rate <= 1.0:
        raise ValueError("success_rate outside [0, 1]")
    return 2.0 * abs(0.5 - float(success_rate))
