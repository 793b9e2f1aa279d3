"""notebook: 07_beyond_nthr
function: nll_on_correct
slip: the summed log probabilities of the correct responses' valid tokens are divided by the number of valid tokens of ALL responses (mask.sum()) instead of the number of valid tokens of the correct responses."""

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
            raise ValueError(f"{name} must be a floating tensor, got {x.dtype}")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite values")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be a bool tensor, got {x.dtype}")


def nll_on_correct(logp, mask, correct):
    """VAPO's NLL: −(the mean over the correct responses' valid tokens) of ln π."""
    _require(logp, "logp", 2, "float")
    _require(mask, "mask", 2, "bool")
    _require(correct, "correct", 1, "bool")
    if logp.shape != mask.shape:
        raise ValueError("logp and mask must have the same shape")
    if correct.shape[0] != logp.shape[0]:
        raise ValueError("correct must have one entry per row")
    keep = mask & correct[:, None]
    total = torch.where(keep, logp, torch.zeros_like(logp)).sum()
    if not correct.any():
        return total * 0.0
    return -total / mask.sum()
