"""Slip: resolves the default with eps_high = eps_high or eps_low, so an explicit eps_high = 0 (allowed: no unpenalised growth above 1) is silently replaced by eps_low instead of being kept."""

import math

import torch

AGGREGATION_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum")


def _require_2d_float(x, name):
    """Raise ValueError unless x is a 2-D floating torch tensor without NaN or inf."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")  # noqa: TRY004 (the contract asks for ValueError)
    if x.dim() != 2:
        raise ValueError(f"{name} must be 2-D")
    if not torch.is_floating_point(x):
        raise ValueError(f"{name} must be floating")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def clipped_surrogate(
    logp, logp_old, advantages, mask, eps_low=0.2, eps_high=None, mode="token-mean"
):
    """The PPO/GRPO clipped surrogate loss with separate lower and upper clip bounds."""
    _require_2d_float(logp, "logp")
    _require_2d_float(logp_old, "logp_old")
    _require_2d_float(advantages, "advantages")
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.dim() != 2:
        raise ValueError("mask must be a 2-D bool tensor")
    if not (logp.shape == logp_old.shape == advantages.shape == mask.shape):
        raise ValueError("shapes differ")
    if not mask.any(dim=1).all():
        raise ValueError("a row has no valid token")
    if isinstance(eps_low, bool) or not isinstance(eps_low, (int, float)) or not 0 <= eps_low < 1:
        raise ValueError("eps_low must be a number in [0, 1)")
    eps_high = eps_high or eps_low
    if (
        isinstance(eps_high, bool)
        or not isinstance(eps_high, (int, float))
        or math.isnan(eps_high)
        or eps_high < 0
    ):
        raise ValueError("eps_high must be a number >= 0")
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")
    zero = torch.zeros_like(logp)
    log_ratio = torch.where(mask, logp - logp_old.detach(), zero)
    ratio = torch.exp(log_ratio)
    adv = torch.where(mask, advantages.detach(), zero)
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * adv
    obj = torch.where(unclipped <= clipped, unclipped, clipped)
    per_token = torch.where(mask, -obj, zero)
    counts = mask.sum(dim=1)
    if mode == "token-mean":
        return per_token.sum() / counts.sum()
    if mode == "seq-mean-token-mean":
        return (per_token.sum(dim=1) / counts).mean()
    return per_token.sum(dim=1).mean()
