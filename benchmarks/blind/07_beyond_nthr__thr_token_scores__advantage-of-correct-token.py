"""
notebook: 07_beyond_nthr
function: thr_token_scores
slip: the advantage is applied inside the sum with the index of the correct token u (A_u) instead of the scored token t (A_t), so every token gets the correct responses' positive advantage and incorrect tokens never get a negative THR.
"""

import torch


def _require(x, name, ndim, kind):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D")
    if kind == "float":
        if not x.is_floating_point():
            raise ValueError(f"{name} must be floating")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN/inf")
    elif kind == "bool":
        if x.dtype != torch.bool:
            raise ValueError(f"{name} must be bool")


def thr_token_scores(h, err, token_adv, correct):
    """THR_t = A_t * sum over correct tokens u of <err_t, err_u><h_t, h_u>."""
    _require(h, "h", 2, "float")
    _require(err, "err", 2, "float")
    _require(token_adv, "token_adv", 1, "float")
    _require(correct, "correct", 1, "bool")
    T = h.shape[0]
    if err.shape[0] != T or token_adv.shape[0] != T or correct.shape[0] != T:
        raise ValueError("h, err, token_adv and correct must all have T entries")
    if not correct.any():
        raise ValueError("no correct token: THR is undefined")
    alpha = err @ err[correct].T  # (T, Nc)
    sim = h @ h[correct].T  # (T, Nc)
    return (alpha * sim * token_adv[correct]).sum(dim=1)
