"""Slip: the range check rejects a success rate of exactly 1 (p >= 1 instead of p > 1), so an all-correct group raises ValueError instead of getting eta = 1."""

import torch


def eta_schedule(success_rate):
    """eta = 2 * |0.5 - p| for a group with success rate p (Deng et al.'s training setting)."""
    if isinstance(success_rate, torch.Tensor):
        if not torch.is_floating_point(success_rate):
            raise ValueError("success_rate must be a floating tensor")
        if torch.isnan(success_rate).any() or (success_rate < 0).any() or (success_rate >= 1).any():
            raise ValueError("success rates must lie in [0, 1]")
        return 2 * torch.abs(0.5 - success_rate)
    if isinstance(success_rate, bool) or not isinstance(success_rate, (int, float)):
        raise ValueError("success_rate must be a float or a float tensor")
    p = float(success_rate)
    if not 0 <= p < 1:
        raise ValueError("success rate must lie in [0, 1]")
    return 2 * abs(0.5 - p)
