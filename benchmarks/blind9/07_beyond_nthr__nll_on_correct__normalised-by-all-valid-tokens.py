"""Slip: divides the correct responses' summed log probabilities by the number of valid tokens of
the whole batch (every response) instead of by the correct responses' valid tokens."""

import torch


def _require(x, name, ndim, kind):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions, of `kind` "float" or "bool"."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D")
    if kind == "float":
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or inf")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be a bool tensor")


def nll_on_correct(logp, mask, correct):
    """VAPO's NLL: -(the mean over the correct responses' valid tokens) of ln pi."""
    _require(logp, "logp", 2, "float")
    _require(mask, "mask", 2, "bool")
    _require(correct, "correct", 1, "bool")
    if mask.shape != logp.shape:
        raise ValueError("mask must have the shape of logp")
    if correct.shape[0] != logp.shape[0]:
        raise ValueError("correct must have length B")
    sel = mask & correct.unsqueeze(1)
    if not sel.any():
        return logp.sum() * 0.0
    total = torch.where(sel, logp, torch.zeros_like(logp)).sum()
    return -total / mask.sum()
