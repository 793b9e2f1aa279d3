"""Slip: the advantages are whitened over the valid tokens first ((A − mean)/(std + 1e-8), the
advantage normalisation habit of PPO trainers) before entering the surrogate, instead of being used
as given, so the loss and its gradient are rescaled and shifted."""

import math

import torch

AGGREGATION_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum")


def _require_2d_float(x, name):
    """Raise ValueError unless x is a 2-D floating torch tensor without NaN or ±inf."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != 2:
        raise ValueError(f"{name} must be 2-D, got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite values")


def _check_surrogate_args(logp, logp_old, advantages, mask, eps_low, eps_high, mode):
    _require_2d_float(logp, "logp")
    _require_2d_float(logp_old, "logp_old")
    _require_2d_float(advantages, "advantages")
    if not isinstance(mask, torch.Tensor):
        raise ValueError("mask must be a torch tensor")
    if mask.dim() != 2:
        raise ValueError("mask must be 2-D")
    if not (logp.shape == logp_old.shape == advantages.shape == mask.shape):
        raise ValueError("logp, logp_old, advantages and mask must have the same shape")
    if mask.dtype != torch.bool:
        raise ValueError("mask must be a bool tensor")
    if not mask.any(dim=1).all():
        raise ValueError("a row of mask has no valid token")
    if (
        isinstance(eps_low, bool)
        or not isinstance(eps_low, (int, float))
        or not (0.0 <= eps_low < 1.0)
    ):
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
    per_token = torch.where(mask, per_token, torch.zeros_like(per_token))
    counts = mask.sum(dim=1).to(per_token.dtype)
    row_sums = per_token.sum(dim=1)
    if mode == "token-mean":
        return row_sums.sum() / counts.sum()
    if mode == "seq-mean-token-mean":
        return (row_sums / counts).mean()
    return row_sums.mean()


def clipped_surrogate(
    logp, logp_old, advantages, mask, eps_low=0.2, eps_high=None, mode="token-mean"
):
    """The PPO/GRPO clipped surrogate loss with separate lower and upper clip bounds."""
    _check_surrogate_args(logp, logp_old, advantages, mask, eps_low, eps_high, mode)
    if eps_high is None:
        eps_high = eps_low
    adv = advantages.detach()
    valid = adv[mask]
    std = valid.std() if valid.numel() > 1 else torch.zeros((), dtype=adv.dtype)
    adv = (adv - valid.mean()) / (std + 1e-8)
    log_ratio = torch.where(mask, logp - logp_old.detach(), torch.zeros_like(logp))
    ratio = torch.exp(log_ratio)
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high) * adv
    objective = torch.minimum(unclipped, clipped)
    return _aggregate(-objective, mask, mode)
