"""Slip: combines the masks as mask & correct, which broadcasts the (B,) correct vector along the
time axis (selecting columns) instead of rows; it only runs when B == T, and then picks the
wrong tokens (correct[:, None] was meant).
"""

import torch


def _require(x, name, ndim, kind):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions, of `kind`
    "float" (floating point, no NaN or +-inf) or "bool"."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")
    if kind == "float":
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor, got {x.dtype}")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite entries")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be a bool tensor, got {x.dtype}")


def nll_on_correct(logp, mask, correct):
    """VAPO's NLL: -(the mean over the correct responses' valid tokens) of ln pi."""
    _require(logp, "logp", 2, "float")
    _require(mask, "mask", 2, "bool")
    _require(correct, "correct", 1, "bool")
    if mask.shape != logp.shape:
        raise ValueError("logp and mask must have the same shape")
    if correct.shape[0] != logp.shape[0]:
        raise ValueError("correct must have one entry per row")
    keep = mask & correct
    n = keep.sum()
    if n == 0:
        return torch.zeros((), dtype=logp.dtype)
    return -torch.where(keep, logp, torch.zeros_like(logp)).sum() / n
