"""Slip: multiplies the score by sign(A_t) instead of by the advantage A_t itself, so THR keeps its
sign but loses the advantage's magnitude (right only when every |A_t| is 0 or 1).
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


def thr_token_scores(h, err, token_adv, correct):
    """Token hidden reward: THR_t = A_t * sum over correct tokens u of <err_t, err_u><h_t, h_u>."""
    _require(h, "h", 2, "float")
    _require(err, "err", 2, "float")
    _require(token_adv, "token_adv", 1, "float")
    _require(correct, "correct", 1, "bool")
    T = h.shape[0]
    if err.shape[0] != T or token_adv.shape[0] != T or correct.shape[0] != T:
        raise ValueError("h, err, token_adv and correct must have the same length T")
    if not correct.any():
        raise ValueError("no correct token: THR is undefined")
    scores = ((err @ err[correct].T) * (h @ h[correct].T)).sum(dim=1)
    return torch.sign(token_adv) * scores
