"""notebook: 05_grpo_lld
function: group_advantages
library: huggingface/trl@f2cd57710ae3 trl/trainer/grpo_trainer.py (GRPOTrainer._generate_and_score_completions, scale_rewards="group") with trl/trainer/utils.py (nanstd)
slip: the library divides by std + 1e-4 (a fixed constant, so the eps argument has no effect) and does not zero a group whose rewards are all equal: (1, 0, 0, 1) gives 0.865875 instead of 0.866025."""

import math

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def group_advantages(rewards, eps=1e-6):
    """GRPO advantages as TRL computes them: (r - group mean) / (Bessel std + 1e-4)."""
    _require_tensor(rewards, "rewards", 2)
    if rewards.shape[1] < 2:
        raise ValueError(f"need G >= 2 responses per group, got G = {rewards.shape[1]}")
    if (
        isinstance(eps, bool)
        or not isinstance(eps, (int, float))
        or not math.isfinite(eps)
        or eps < 0
    ):
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
    r = rewards.detach()
    if not r.is_floating_point():
        r = r.float()
    _require_finite(r, "rewards")
    mean = torch.nanmean(r, dim=1, keepdim=True)
    # nanstd: the mean squared deviation times count / (count - 1), then the square root
    count = (~torch.isnan(r)).sum(dim=1, keepdim=True)
    var = torch.nanmean((r - mean) ** 2, dim=1, keepdim=True) * (count / (count - 1))
    std = torch.sqrt(var)
    # the library's stabiliser is the constant 1e-4; equal groups are not special-cased
    return (r - mean) / (std + 1e-4)
