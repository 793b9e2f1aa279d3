"""Slip: for a tensor of success rates it uses the batch's mean rate for every entry (eta = 2|0.5 - mean(p)|) instead of each group's own rate."""

import math

import torch


def eta_schedule(success_rate):
    """eta = 2 * |0.5 - p| for a group with success rate p (Deng et al.'s training setting)."""
    if isinstance(success_rate, torch.Tensor):
        if not torch.is_floating_point(success_rate):
            raise ValueError("success_rate must be a floating tensor")
        p = success_rate.detach()
        if torch.isnan(p).any() or (p < 0).any() or (p > 1).any():
            raise ValueError("success rates must be in [0, 1]")
        return torch.full_like(p, 2.0) * (0.5 - p.mean()).abs()
    if isinstance(success_rate, bool) or not isinstance(success_rate, (int, float)):
        raise ValueError("success_rate must be a float or a floating tensor")  # noqa: TRY004 (the contract asks for ValueError)
    if math.isnan(success_rate) or not 0 <= success_rate <= 1:
        raise ValueError("success rate must be in [0, 1]")
    return 2.0 * abs(0.5 - success_rate)
