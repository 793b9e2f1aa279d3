"""Slip: takes the minimum of the two ratios and multiplies by the advantage afterwards, min(r,
clip(r)) * A, instead of the minimum of the two products, which turns the pessimistic bound into
an optimistic one for negative advantages.
"""

import math

import torch

AGGREGATION_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum")


def _require_2d_float(x, name):
    """Raise ValueError unless x is a 2-D floating torch tensor without NaN or +-inf."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != 2:
        raise ValueError(f"{name} must be 2-D, got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating tensor, got {x.dtype}")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite entries")


def clipped_surrogate(
    logp, logp_old, advantages, mask, eps_low=0.2, eps_high=None, mode="token-mean"
):
    """The PPO/GRPO clipped surrogate loss with separate lower and upper clip bounds."""
    for x, name in ((logp, "logp"), (logp_old, "logp_old"), (advantages, "advantages")):
        _require_2d_float(x, name)
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.dim() != 2:
        raise ValueError("mask must be a 2-D bool tensor")
    if not (logp.shape == logp_old.shape == advantages.shape == mask.shape):
        raise ValueError("logp, logp_old, advantages and mask must have the same shape")
    if not mask.any(dim=1).all():
        raise ValueError("a row of mask has no valid token")
    if isinstance(eps_low, bool) or not isinstance(eps_low, (int, float)) or not 0 <= eps_low < 1:
        raise ValueError(f"eps_low must be a number in [0, 1), got {eps_low}")
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")
    if eps_high is None:
        eps_high = eps_low
    if (
        isinstance(eps_high, bool)
        or not isinstance(eps_high, (int, float))
        or math.isnan(eps_high)
        or eps_high < 0
    ):
        raise ValueError(f"eps_high must be a number >= 0, got {eps_high}")
    old = logp_old.detach()
    adv = advantages.detach()
    log_ratio = torch.where(mask, logp - old, torch.zeros_like(logp))
    ratio = torch.exp(log_ratio)
    o = torch.minimum(ratio, torch.clamp(ratio, 1 - eps_low, 1 + eps_high)) * adv
    neg = torch.where(mask, -o, torch.zeros_like(o))
    counts = mask.sum(dim=1)
    if mode == "token-mean":
        return neg.sum() / counts.sum()
    if mode == "seq-mean-token-mean":
        return (neg.sum(dim=1) / counts).mean()
    return neg.sum(dim=1).mean()
