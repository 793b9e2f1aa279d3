"""notebook: 06_nthr
function: eta_schedule
slip: builds eta from the group's reward std, 1 - 2*sqrt(p(1-p)) (0 for a balanced group, 1 for a unanimous one), instead of 2*|0.5 - p|; both agree only at p = 0, 0.5 and 1."""

import math

import torch


def eta_schedule(success_rate):
    if isinstance(success_rate, torch.Tensor):
        if not success_rate.is_floating_point():
            raise ValueError("success_rate must be a floating tensor")
        if torch.isnan(success_rate).any() or ((success_rate < 0) | (success_rate > 1)).any():
            raise ValueError("success rates must lie in [0, 1]")
        p = success_rate.detach()
        return 1 - 2 * torch.sqrt(p * (1 - p))
    if isinstance(success_rate, bool) or not isinstance(success_rate, (int, float)):
        raise ValueError(
            f"success_rate must be a float or a float tensor, got {type(success_rate).__name__}"
        )
    if math.isnan(success_rate) or not 0 <= success_rate <= 1:
        raise ValueError(f"success rate {success_rate} outside [0, 1]")
    p = float(success_rate)
    return 1 - 2 * math.sqrt(p * (1 - p))
