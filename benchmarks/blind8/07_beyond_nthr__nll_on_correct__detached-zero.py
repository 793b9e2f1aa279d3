"""Slip: when no response is correct returns a fresh constant torch.tensor(0.0), cut off from
logp's graph, instead of a zero that stays connected to logp (e.g. (logp * 0).sum()); backward()
on it then fails instead of giving a zero gradient.
"""

import torch


def _require(x, name, ndim, kind):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions, of `kind`
    "float" (floating point, no NaN or ±inf) or "bool"."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")
    if kind == "float":
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite values")
    elif kind == "bool":
        if x.dtype != torch.bool:
            raise ValueError(f"{name} must be a bool tensor")
    else:
        raise ValueError(f"unknown kind {kind!r}")


def nll_on_correct(logp, mask, correct):
    """VAPO's NLL: −(the mean over the correct responses' valid tokens) of ln π."""
    _require(logp, "logp", 2, "float")
    _require(mask, "mask", 2, "bool")
    _require(correct, "correct", 1, "bool")
    if mask.shape != logp.shape:
        raise ValueError("mask and logp must have the same shape")
    if correct.shape[0] != logp.shape[0]:
        raise ValueError("correct must have one entry per row of logp")
    sel = mask & correct[:, None]
    n = sel.sum()
    if n == 0:
        return torch.tensor(0.0, dtype=logp.dtype)
    return -torch.where(sel, logp, torch.zeros_like(logp)).sum() / n
