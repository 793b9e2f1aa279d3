"""notebook: 06_nthr
function: eta_schedule
slip: for a tensor input every entry gets 2 · |0.5 − mean(p)|, the schedule of the batch's mean success rate, instead of each group's own 2 · |0.5 − p|."""

import math

import torch


def eta_schedule(success_rate):
    """η = 2 · |0.5 − p| for a group with success rate p (Deng et al.'s training setting)."""
    if isinstance(success_rate, torch.Tensor):
        if not success_rate.is_floating_point():
            raise ValueError(f"success_rate must be a floating tensor, got {success_rate.dtype}")
        if torch.isnan(success_rate).any():
            raise ValueError("success_rate holds NaN")
        if ((success_rate < 0) | (success_rate > 1)).any():
            raise ValueError("success_rate has values outside [0, 1]")
        p = success_rate.detach()
        if p.numel() == 0:
            return p.clone()
        return torch.full_like(p, float(2 * (0.5 - p.mean()).abs()))
    if isinstance(success_rate, bool) or not isinstance(success_rate, (int, float)):
        raise ValueError(
            f"success_rate must be a float or a float tensor, got {type(success_rate).__name__}"
        )
    if math.isnan(success_rate) or not 0 <= success_rate <= 1:
        raise ValueError(f"success_rate must be in [0, 1], got {success_rate}")
    return 2 * abs(0.5 - success_rate)
