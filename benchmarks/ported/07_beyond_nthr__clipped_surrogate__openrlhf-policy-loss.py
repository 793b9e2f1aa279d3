"""notebook: 07_beyond_nthr
function: clipped_surrogate
library: OpenRLHF/OpenRLHF@3c3be6234e0c openrlhf/models/loss.py (PolicyLoss.forward, policy_loss_type="ppo", dual_clip=None, with aggregate_loss)
slip: the library clamps the log ratio to [-20, 20] before the exponential, so a valid token whose log ratio is above 20 with a negative advantage is charged exp(20) * |A| (and gets no gradient) instead of exp(logp - logp_old) * |A|; it masks by multiplication, which the clamp keeps finite."""

import math

import torch

AGGREGATION_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum")


def _require_2d_float(x, name):
    """Raise ValueError unless x is a 2-D floating torch tensor without NaN or inf."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != 2:
        raise ValueError(f"{name} must be 2-D (B, T), got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating tensor, got {x.dtype}")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def _bound(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


def clipped_surrogate(
    logp, logp_old, advantages, mask, eps_low=0.2, eps_high=None, mode="token-mean"
):
    """PPO clipped surrogate loss as OpenRLHF's PolicyLoss computes it."""
    _require_2d_float(logp, "logp")
    _require_2d_float(logp_old, "logp_old")
    _require_2d_float(advantages, "advantages")
    if not isinstance(mask, torch.Tensor):
        raise ValueError(f"mask must be a torch tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor, got {mask.dtype}")
    shapes = {tuple(t.shape) for t in (logp, logp_old, advantages, mask)}
    if len(shapes) != 1:
        raise ValueError(f"logp, logp_old, advantages and mask must share one shape, got {shapes}")
    if not mask.any(dim=-1).all():
        raise ValueError("every row of mask needs a valid token")
    low = _bound(eps_low, "eps_low")
    if not 0.0 <= low < 1.0:
        raise ValueError(f"eps_low must lie in [0, 1), got {eps_low!r}")
    high = low if eps_high is None else _bound(eps_high, "eps_high")
    if high < 0:
        raise ValueError(f"eps_high must be >= 0, got {eps_high!r}")
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {AGGREGATION_MODES}")

    logp_old = logp_old.detach()
    advantages = advantages.detach()
    # the library bounds the log ratio before exponentiating it
    ratio = (logp - logp_old).clamp(min=-20.0, max=20.0).exp()
    surr1 = ratio * advantages
    surr2 = ratio.clamp(1 - low, 1 + high) * advantages
    loss = -torch.min(surr1, surr2)

    weights = mask.to(loss.dtype)
    masked = loss * weights  # masking by multiplication, as the library's aggregate_loss does
    if mode == "token-mean":  # token_level_loss=True: masked_mean over the whole batch
        return masked.sum() / weights.sum()
    counts = weights.sum(dim=-1)
    if mode == "seq-mean-token-mean":  # token_level_loss=False: per-sequence token means
        seq_loss = masked.sum(dim=-1) / (counts + 1e-8)
        seq_mask = (counts > 0).to(loss.dtype)
        return (seq_loss * seq_mask).sum() / seq_mask.sum()
    # the library has no seq-mean-token-sum reduction: the text's formula, same masking
    return masked.sum(dim=-1).mean()
