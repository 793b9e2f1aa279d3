"""notebook: 07_beyond_nthr
function: clipped_surrogate
slip: resolves the default with `eps_high = eps_high or eps_low`, so an explicit eps_high = 0 (allowed by the text) is silently replaced by eps_low."""

import math

import torch

AGGREGATION_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum")


def _require_2d_float(x, name):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != 2:
        raise ValueError(f"{name} must be 2-D, got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or an infinite value")


def clipped_surrogate(
    logp, logp_old, advantages, mask, eps_low=0.2, eps_high=None, mode="token-mean"
):
    _require_2d_float(logp, "logp")
    _require_2d_float(logp_old, "logp_old")
    _require_2d_float(advantages, "advantages")
    if not isinstance(mask, torch.Tensor) or mask.dim() != 2 or mask.dtype != torch.bool:
        raise ValueError("mask must be a 2-D bool tensor")
    if not (logp.shape == logp_old.shape == advantages.shape == mask.shape):
        raise ValueError("logp, logp_old, advantages and mask must have the same shape")
    if not mask.any(dim=1).all():
        raise ValueError("a row of mask has no valid token")
    if (
        isinstance(eps_low, bool)
        or not isinstance(eps_low, (int, float))
        or math.isnan(eps_low)
        or not 0 <= eps_low < 1
    ):
        raise ValueError(f"eps_low must be a number in [0, 1), got {eps_low!r}")
    eps_high = eps_high or eps_low
    if (
        isinstance(eps_high, bool)
        or not isinstance(eps_high, (int, float))
        or math.isnan(eps_high)
        or eps_high < 0
    ):
        raise ValueError(f"eps_high must be a number >= 0, got {eps_high!r}")
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")
    old, adv = logp_old.detach(), advantages.detach()
    diff = torch.where(mask, logp - old, torch.zeros_like(logp))
    ratio = torch.exp(diff)
    obj = torch.minimum(ratio * adv, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * adv)
    loss_tok = torch.where(mask, -obj, torch.zeros_like(obj))
    counts = mask.sum(dim=1).to(loss_tok.dtype)
    if mode == "token-mean":
        return loss_tok.sum() / counts.sum()
    if mode == "seq-mean-token-mean":
        return (loss_tok.sum(dim=1) / counts).mean()
    return loss_tok.sum(dim=1).mean()
