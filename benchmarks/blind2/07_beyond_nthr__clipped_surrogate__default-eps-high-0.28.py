"""
notebook: 07_beyond_nthr
function: clipped_surrogate
slip: when eps_high is None it falls back to DAPO's clip-higher value 0.28 instead of eps_low, so the default call uses asymmetric bounds [1 - eps_low, 1.28] rather than symmetric ones.
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
        raise ValueError(f"{name} must be floating point")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def _check_bounds_and_mask(logp, logp_old, advantages, mask, eps_low, eps_high, mode):
    for x, n in ((logp, "logp"), (logp_old, "logp_old"), (advantages, "advantages")):
        _require_2d_float(x, n)
    if not isinstance(mask, torch.Tensor) or mask.dim() != 2:
        raise ValueError("mask must be a 2-D torch tensor")
    if mask.dtype != torch.bool:
        raise ValueError("mask must be bool")
    if not (logp.shape == logp_old.shape == advantages.shape == mask.shape):
        raise ValueError("all tensors must have the same shape")
    if not mask.any(dim=1).all():
        raise ValueError("a row of mask has no valid token")
    if isinstance(eps_low, bool) or not isinstance(eps_low, (int, float)) or not (0 <= eps_low < 1):
        raise ValueError("eps_low must be a number in [0, 1)")
    if eps_high is not None:
        if (
            isinstance(eps_high, bool)
            or not isinstance(eps_high, (int, float))
            or math.isnan(eps_high)
            or eps_high < 0
        ):
            raise ValueError("eps_high must be a number >= 0")
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")


def _aggregate(per_token, mask, mode):
    x = torch.where(mask, per_token, torch.zeros_like(per_token))
    n = mask.sum(dim=1).to(x.dtype)
    if mode == "token-mean":
        return x.sum() / n.sum()
    if mode == "seq-mean-token-mean":
        return (x.sum(dim=1) / n).mean()
    return x.sum(dim=1).mean()


def clipped_surrogate(
    logp, logp_old, advantages, mask, eps_low=0.2, eps_high=None, mode="token-mean"
):
    _check_bounds_and_mask(logp, logp_old, advantages, mask, eps_low, eps_high, mode)
    if eps_high is None:
        eps_high = 0.28  # DAPO clip-higher default
    old = logp_old.detach()
    adv = advantages.detach()
    log_ratio = torch.where(mask, logp - old, torch.zeros_like(logp))
    ratio = torch.exp(log_ratio)
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high) * adv
    objective = torch.minimum(unclipped, clipped)
    return _aggregate(-objective, mask, mode)
