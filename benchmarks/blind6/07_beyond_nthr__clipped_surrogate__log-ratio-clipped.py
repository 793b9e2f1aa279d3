"""notebook: 07_beyond_nthr
function: clipped_surrogate
slip: clips the log ratio to [−eps_low, eps_high] and exponentiates, i.e. bounds the ratio at [exp(−eps_low), exp(eps_high)] instead of [1 − eps_low, 1 + eps_high]."""

import torch

AGGREGATION_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum")


def _require_2d_float(x, name):
    """Raise ValueError unless x is a 2-D floating torch tensor without NaN or ±inf."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != 2:
        raise ValueError(f"{name} must be 2-D")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be floating")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def _check_surrogate_inputs(logp, logp_old, advantages, mask, eps_low, eps_high, mode):
    _require_2d_float(logp, "logp")
    _require_2d_float(logp_old, "logp_old")
    _require_2d_float(advantages, "advantages")
    if not isinstance(mask, torch.Tensor) or mask.dim() != 2 or mask.dtype != torch.bool:
        raise ValueError("mask must be a 2-D bool tensor")
    if not (logp.shape == logp_old.shape == advantages.shape == mask.shape):
        raise ValueError("shapes differ")
    if not mask.any(dim=1).all():
        raise ValueError("a row of mask has no valid token")
    if isinstance(eps_low, bool) or not isinstance(eps_low, (int, float)) or not (0 <= eps_low < 1):
        raise ValueError("eps_low must be a number in [0, 1)")
    if eps_high is not None and (
        isinstance(eps_high, bool) or not isinstance(eps_high, (int, float)) or not eps_high >= 0
    ):
        raise ValueError("eps_high must be a number >= 0")
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")


def _aggregate(neg_obj, mask, mode):
    zeroed = torch.where(mask, neg_obj, torch.zeros_like(neg_obj))
    counts = mask.sum(dim=1).to(neg_obj.dtype)
    if mode == "token-mean":
        return zeroed.sum() / counts.sum()
    if mode == "seq-mean-token-mean":
        return (zeroed.sum(dim=1) / counts).mean()
    return zeroed.sum(dim=1).mean()


def clipped_surrogate(
    logp, logp_old, advantages, mask, eps_low=0.2, eps_high=None, mode="token-mean"
):
    _check_surrogate_inputs(logp, logp_old, advantages, mask, eps_low, eps_high, mode)
    if eps_high is None:
        eps_high = eps_low
    logp_old, advantages = logp_old.detach(), advantages.detach()
    log_ratio = torch.where(mask, logp - logp_old, torch.zeros_like(logp))
    ratio = torch.exp(log_ratio)
    clipped = torch.exp(torch.clamp(log_ratio, -eps_low, eps_high))
    obj = torch.minimum(ratio * advantages, clipped * advantages)
    return _aggregate(-obj, mask, mode)
