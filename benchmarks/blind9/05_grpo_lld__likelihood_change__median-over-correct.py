"""Slip: reduces the correct responses' changes with torch.median (which returns the lower middle
value for an even count) instead of their mean."""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got {x.dim()}-D")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def likelihood_change(logp_before, logp_after, correct):
    """Deng et al.'s Eq. 2 for one group: mean over CORRECT responses of ln pi_theta'(y+) - ln pi_theta(y+)."""
    _require_tensor(logp_before, "logp_before", 1)
    _require_tensor(logp_after, "logp_after", 1)
    _require_tensor(correct, "correct", 1)
    if not (logp_before.shape == logp_after.shape == correct.shape):
        raise ValueError("the three tensors must have the same length")
    _require_finite(logp_before, "logp_before")
    _require_finite(logp_after, "logp_after")
    if correct.dtype != torch.bool:
        if correct.is_floating_point() or not ((correct == 0) | (correct == 1)).all():
            raise ValueError("correct must be bool or 0/1")
    sel = correct.bool()
    if not sel.any():
        raise ValueError("no correct response: the change is undefined")
    delta = (logp_after - logp_before).detach()[sel]
    return float(delta.median())
