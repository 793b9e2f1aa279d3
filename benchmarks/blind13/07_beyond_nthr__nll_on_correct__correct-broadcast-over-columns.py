"""Slip: builds the selection as mask & correct[None, :] (correct broadcast along the columns, T) instead of mask & correct[:, None] (along the rows, B); with B == T it silently selects tokens by position, otherwise it fails to broadcast."""

import torch


def _require(x, name, ndim, kind):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions, of `kind` "float" or "bool"."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")  # noqa: TRY004 (the contract asks for ValueError)
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D")
    if kind == "float":
        if not torch.is_floating_point(x):
            raise ValueError(f"{name} must be floating")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or inf")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be bool")


def nll_on_correct(logp, mask, correct):
    """VAPO's NLL: -(the mean over the correct responses' valid tokens) of ln pi."""
    _require(logp, "logp", 2, "float")
    _require(mask, "mask", 2, "bool")
    _require(correct, "correct", 1, "bool")
    if mask.shape != logp.shape or correct.shape[0] != logp.shape[0]:
        raise ValueError("shapes differ")
    sel = mask & correct[None, :]
    n = sel.sum()
    if n == 0:
        return (logp * 0.0).sum()
    return -torch.where(sel, logp, torch.zeros_like(logp)).sum() / n
