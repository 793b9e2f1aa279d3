"""Slip: the token selection is `mask & correct` with the (B,) correct vector broadcast along the last
(token) axis instead of correct[:, None], so correctness is read per position: a shape error unless
B == T, and when B == T the wrong tokens are averaged."""

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
            raise ValueError(f"{name} must be floating")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite values")
    elif kind == "bool":
        if x.dtype != torch.bool:
            raise ValueError(f"{name} must be a bool tensor")


def nll_on_correct(logp, mask, correct):
    """VAPO's NLL: −(the mean over the correct responses' valid tokens) of ln π."""
    _require(logp, "logp", 2, "float")
    _require(mask, "mask", 2, "bool")
    _require(correct, "correct", 1, "bool")
    if logp.shape != mask.shape:
        raise ValueError("logp and mask must have the same shape")
    if correct.shape[0] != logp.shape[0]:
        raise ValueError("correct must have length B")
    if not correct.any():
        return (logp * 0.0).sum()
    sel = mask & correct
    n = sel.sum()
    return -torch.where(sel, logp, torch.zeros_like(logp)).sum() / n
