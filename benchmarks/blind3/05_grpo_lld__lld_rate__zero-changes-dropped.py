"""notebook: 05_grpo_lld
function: lld_rate
slip: treats a change of exactly 0 as a skipped group (all advantages 0) and drops it from both the count and the denominator, instead of counting it as LLD among all groups."""

import math

import torch


def _require_tensor(x, name, ndim):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or an infinite value")


def lld_rate(changes, eps=0.0):
    _require_tensor(changes, "changes", 1)
    if changes.numel() == 0:
        raise ValueError("no groups")
    _require_finite(changes, "changes")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps):
        raise ValueError(f"eps must be a finite number, got {eps!r}")
    probed = changes[changes != 0]
    if probed.numel() == 0:
        return 0.0
    return float((probed <= eps).sum()) / probed.numel()
