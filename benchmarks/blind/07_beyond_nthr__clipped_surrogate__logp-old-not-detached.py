"""
notebook: 07_beyond_nthr
function: clipped_surrogate
slip: logp_old is used as is and not detached, so when the old log probabilities carry a graph (e.g. recomputed by the same model) the loss sends a gradient into them; only the advantages are detached.
"""

import math

import torch

AGGREGATION_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum")


def _require_2d_float(x, name):
    if not torch.is_tensor(x) or x.ndim != 2:
        raise ValueError(f"{name} must be a 2-D torch tensor")
    if not torch.is_floating_point(x):
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} must be finite")


def clipped_surrogate(
    logp, logp_old, advantages, mask, eps_low=0.2, eps_high=None, mode="token-mean"
):
    """PPO/GRPO clipped surrogate loss (to minimise)."""
    for name, x in (("logp", logp), ("logp_old", logp_old), ("advantages", advantages)):
        _require_2d_float(x, name)
    if not torch.is_tensor(mask) or mask.ndim != 2 or mask.dtype != torch.bool:
        raise ValueError("mask must be a 2-D bool tensor")
    if logp.shape != logp_old.shape or logp.shape != advantages.shape or logp.shape != mask.shape:
        raise ValueError("shapes differ")
    if (mask.sum(dim=1) == 0).any():
        raise ValueError("a row has no valid token")
    if (
        isinstance(eps_low, bool)
        or not isinstance(eps_low, (int, float))
        or math.isnan(eps_low)
        or not 0 <= eps_low < 1
    ):
        raise ValueError("eps_low must be in [0, 1)")
    if eps_high is None:
        eps_high = eps_low
    if (
        isinstance(eps_high, bool)
        or not isinstance(eps_high, (int, float))
        or math.isnan(eps_high)
        or eps_high < 0
    ):
        raise ValueError("eps_high must be a number >= 0")
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")

    A = advantages.detach()
    diff = torch.where(mask, logp - logp_old, torch.zeros_like(logp))
    r = diff.exp()
    obj = torch.min(r * A, r.clamp(1 - eps_low, 1 + eps_high) * A)
    loss_tok = torch.where(mask, -obj, torch.zeros_like(obj))
    counts = mask.sum(dim=1).to(loss_tok.dtype)
    if mode == "token-mean":
        return loss_tok.sum() / counts.sum()
    if mode == "seq-mean-token-mean":
        return (loss_tok.sum(dim=1) / counts).mean()
    return loss_tok.sum(dim=1).mean()
