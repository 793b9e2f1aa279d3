"""
notebook: 07_beyond_nthr
function: clipped_surrogate
slip: the default is resolved with `eps_high = eps_high or eps_low`, so an explicit eps_high = 0 (which the text allows: no unpenalised growth above 1) is treated like None and replaced by eps_low.
"""

import math

import torch

AGGREGATION_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum")


def _require_2d_float(x, name):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != 2:
        raise ValueError(f"{name} must be 2-D")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be floating")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN/inf")


def clipped_surrogate(
    logp, logp_old, advantages, mask, eps_low=0.2, eps_high=None, mode="token-mean"
):
    """PPO/GRPO clipped surrogate loss with clip-higher bounds."""
    _require_2d_float(logp, "logp")
    _require_2d_float(logp_old, "logp_old")
    _require_2d_float(advantages, "advantages")
    if not isinstance(mask, torch.Tensor) or mask.dim() != 2:
        raise ValueError("mask must be a 2-D torch tensor")
    if not (logp.shape == logp_old.shape == advantages.shape == mask.shape):
        raise ValueError("logp, logp_old, advantages and mask must share one shape")
    if mask.dtype != torch.bool:
        raise ValueError("mask must be a bool tensor")
    if not mask.any(dim=1).all():
        raise ValueError("every row of mask needs a valid token")
    if isinstance(eps_low, bool) or not isinstance(eps_low, (int, float)) or not (0 <= eps_low < 1):
        raise ValueError("eps_low must be a number in [0, 1)")
    eps_high = eps_high or eps_low
    if (
        isinstance(eps_high, bool)
        or not isinstance(eps_high, (int, float))
        or math.isnan(eps_high)
        or eps_high < 0
    ):
        raise ValueError("eps_high must be >= 0")
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")

    old = logp_old.detach()
    adv = advantages.detach()
    log_ratio = torch.where(mask, logp - old, torch.zeros_like(logp))
    ratio = torch.exp(log_ratio)
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high) * adv
    per_token = torch.where(mask, -torch.min(unclipped, clipped), torch.zeros_like(logp))
    n = mask.sum(dim=1).to(per_token.dtype)
    if mode == "token-mean":
        return per_token.sum() / n.sum()
    if mode == "seq-mean-token-mean":
        return (per_token.sum(dim=1) / n).mean()
    return per_token.sum(dim=1).mean()
