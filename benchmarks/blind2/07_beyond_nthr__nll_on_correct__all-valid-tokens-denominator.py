"""
notebook: 07_beyond_nthr
function: nll_on_correct
slip: sums -ln pi over the correct responses' valid tokens but divides by the number of valid tokens of the whole batch (mask.sum()) instead of the number of valid tokens of the correct responses.
"""

import torch


def _check(x, name, ndim, dtype_kind):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} is not a tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D")
    if dtype_kind == "float" and (not x.is_floating_point() or not torch.isfinite(x).all()):
        raise ValueError(f"{name} must be a finite floating tensor")
    if dtype_kind == "bool" and x.dtype != torch.bool:
        raise ValueError(f"{name} must be bool")


def nll_on_correct(logp, mask, correct):
    _check(logp, "logp", 2, "float")
    _check(mask, "mask", 2, "bool")
    _check(correct, "correct", 1, "bool")
    if logp.shape != mask.shape:
        raise ValueError("logp and mask shapes differ")
    if correct.shape[0] != logp.shape[0]:
        raise ValueError("correct must have one entry per row")
    if not correct.any():
        return logp.sum() * 0.0
    keep = mask & correct.unsqueeze(1)
    total = torch.where(keep, logp, torch.zeros_like(logp)).sum()
    n_tokens = mask.sum()
    return -total / n_tokens
