"""Slip: averages logp_after over the correct responses but logp_before over all responses (the
mask applied to one side only) instead of averaging the per-response change over the correct
ones.
"""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or +-inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite entries")


def likelihood_change(logp_before, logp_after, correct):
    """Deng et al.'s Eq. 2 for one group: mean over CORRECT responses of ln pi_theta'(y+) - ln pi_theta(y+)."""
    _require_tensor(logp_before, "logp_before", 1)
    _require_tensor(logp_after, "logp_after", 1)
    _require_tensor(correct, "correct", 1)
    if not (logp_before.shape == logp_after.shape == correct.shape):
        raise ValueError("the three tensors must have the same length")
    if correct.dtype != torch.bool:
        if correct.is_floating_point() or not ((correct == 0) | (correct == 1)).all():
            raise ValueError("correct must be bool or 0/1")
    _require_finite(logp_before, "logp_before")
    _require_finite(logp_after, "logp_after")
    c = correct.bool()
    if not c.any():
        raise ValueError("no correct response: the change is undefined")
    return float(logp_after.detach()[c].mean() - logp_before.detach().mean())
