"""Slip: reduces the correct responses' changes with torch.median (which returns the lower of the two middle values) instead of their mean."""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")  # noqa: TRY004 (the contract asks for ValueError)
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def likelihood_change(logp_before, logp_after, correct):
    """Deng et al.'s Eq. 2 for one group: mean over CORRECT responses of ln pi'(y+) - ln pi(y+)."""
    for x, name in (
        (logp_before, "logp_before"),
        (logp_after, "logp_after"),
        (correct, "correct"),
    ):
        _require_tensor(x, name, 1)
    if not (logp_before.shape == logp_after.shape == correct.shape):
        raise ValueError("tensors of different lengths")
    if not torch.is_floating_point(logp_before) or not torch.is_floating_point(logp_after):
        raise ValueError("log likelihoods must be floating")
    _require_finite(logp_before, "logp_before")
    _require_finite(logp_after, "logp_after")
    if correct.dtype != torch.bool and not ((correct == 0) | (correct == 1)).all():
        raise ValueError("correct must be bool or 0/1")
    c = correct.bool()
    if not c.any():
        raise ValueError("no correct response: the change is undefined")
    diff = (logp_after - logp_before).detach()[c]
    return float(diff.median())
