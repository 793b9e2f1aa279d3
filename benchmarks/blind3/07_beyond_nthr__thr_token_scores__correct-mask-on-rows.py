"""notebook: 07_beyond_nthr
function: thr_token_scores
slip: applies the correct mask to the scored token t (rows) instead of to the summed-over token u (columns): correct tokens are scored against every token and incorrect tokens get THR 0."""

import torch


def _require(x, name, ndim, kind):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")
    if kind == "float":
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or an infinite value")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be a bool tensor")


def thr_token_scores(h, err, token_adv, correct):
    _require(h, "h", 2, "float")
    _require(err, "err", 2, "float")
    _require(token_adv, "token_adv", 1, "float")
    _require(correct, "correct", 1, "bool")
    T = h.shape[0]
    if err.shape[0] != T or token_adv.shape[0] != T or correct.shape[0] != T:
        raise ValueError("h, err, token_adv and correct must all have T rows")
    if not correct.any():
        raise ValueError("no correct token: THR is undefined")
    pair = (err @ err.T) * (h @ h.T)  # (T, T): pair[t, u]
    scores = (pair * correct[:, None].to(pair.dtype)).sum(dim=1)
    return token_adv * scores
