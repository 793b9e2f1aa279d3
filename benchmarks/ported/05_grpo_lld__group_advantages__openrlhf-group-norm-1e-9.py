"""notebook: 05_grpo_lld
function: group_advantages
library: OpenRLHF/OpenRLHF@3c3be6234e0c openrlhf/trainer/ppo_utils/experience_maker.py (advantage estimator "group_norm", reward shaping before compute_reward)
slip: the library divides by torch.std + 1e-9 (a fixed constant, so eps has no effect) and does not zero a group whose rewards are all equal, so the float32 rounding of an equal group is blown up: (0.9, 0.9, 0.9) gives advantages of about 0.8 in size instead of zeros."""

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
    """GRPO advantages as OpenRLHF's group_norm computes them: (r - mean) / (std + 1e-9)."""
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
    # torch.std along the group: Bessel's correction, as the text asks; the stabiliser is fixed
    return (r - r.mean(-1, keepdim=True)) / (r.std(-1, keepdim=True) + 1e-9)
