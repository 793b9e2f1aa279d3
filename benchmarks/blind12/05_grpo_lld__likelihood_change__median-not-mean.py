"""Slip: takes torch.median of the correct responses' changes (the lower middle value for an even count) instead of their mean."""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got {x.dim()}-D")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or +-inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite values")


def likelihood_change(logp_before, logp_after, correct):
    """Deng et al.'s Eq. 2 for one group: mean over CORRECT responses of ln pi_theta'(y+) - ln pi_theta(y+)."""
    for name, x in (("logp_before", logp_before), ("logp_after", logp_after), ("correct", correct)):
        _require_tensor(x, name, 1)
    if not (len(logp_before) == len(logp_after) == len(correct)):
        raise ValueError("the three tensors must have the same length")
    if correct.dtype != torch.bool:
        if torch.is_floating_point(correct) or not ((correct == 0) | (correct == 1)).all():
            raise ValueError("correct must be bool or 0/1")
    _require_finite(logp_before, "logp_before")
    _require_finite(logp_after, "logp_after")
    sel = correct.bool()
    if not sel.any():
        raise ValueError("no correct response: the change is undefined")
    diff = (logp_after - logp_before).detach()[sel]
    return float(diff.median())
