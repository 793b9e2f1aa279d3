"""Slip: multiplies the score by sign(A_t) instead of by the advantage A_t itself, so the advantage's size is lost (right only when every |A_t| is 1 or 0)."""

import torch


def _require(x, name, ndim, kind):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions, of `kind` "float" or "bool"."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D")
    if kind == "float":
        if not torch.is_floating_point(x):
            raise ValueError(f"{name} must be floating")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite values")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be bool")


def thr_token_scores(h, err, token_adv, correct):
    """Token hidden reward: THR_t = A_t * sum over correct tokens u of <err_t, err_u><h_t, h_u>."""
    _require(h, "h", 2, "float")
    _require(err, "err", 2, "float")
    _require(token_adv, "token_adv", 1, "float")
    _require(correct, "correct", 1, "bool")
    t = h.shape[0]
    if err.shape[0] != t or token_adv.shape[0] != t or correct.shape[0] != t:
        raise ValueError("lengths differ from T")
    if not correct.any():
        raise ValueError("no correct token: THR is undefined")
    scores = ((err @ err[correct].T) * (h @ h[correct].T)).sum(dim=1)
    return torch.sign(token_adv) * scores
