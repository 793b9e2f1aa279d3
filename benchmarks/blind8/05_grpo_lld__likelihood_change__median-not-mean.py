"""Slip: reduces the correct responses' changes with torch.median (which returns the lower middle
value for an even count) instead of their mean.
"""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or ±inf."""
    if x.is_floating_point() and not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite values")


def likelihood_change(logp_before, logp_after, correct):
    """Deng et al.'s Eq. 2 for one group: mean over CORRECT responses of ln π_θ′(y⁺) − ln π_θ(y⁺)."""
    _require_tensor(logp_before, "logp_before", 1)
    _require_tensor(logp_after, "logp_after", 1)
    _require_tensor(correct, "correct", 1)
    if not (logp_before.shape == logp_after.shape == correct.shape):
        raise ValueError("the three tensors must have the same length")
    _require_finite(logp_before, "logp_before")
    _require_finite(logp_after, "logp_after")
    if not ((correct == 0) | (correct == 1)).all():
        raise ValueError("correct must be bool or 0/1")
    sel = correct.bool()
    if not sel.any():
        raise ValueError("no correct response: the change is undefined (skip the group)")
    diff = (logp_after - logp_before).detach()
    return float(diff[sel].median())
