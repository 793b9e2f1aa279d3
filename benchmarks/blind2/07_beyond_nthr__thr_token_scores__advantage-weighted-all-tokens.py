"""
notebook: 07_beyond_nthr
function: thr_token_scores
slip: sums over every token u of the group weighted by u's advantage (A_t * sum_u A_u <err_t,err_u><h_t,h_u>, the overlap with the whole GRPO step) instead of summing, unweighted, over the correct tokens only.
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
    _require(h, "h", 2, "float")
    _require(err, "err", 2, "float")
    _require(token_adv, "token_adv", 1, "float")
    _require(correct, "correct", 1, "bool")
    T = h.shape[0]
    if err.shape[0] != T or token_adv.shape[0] != T or correct.shape[0] != T:
        raise ValueError("all inputs must describe the same T tokens")
    if not correct.any():
        raise ValueError("no correct token: THR is undefined")
    sim = (err @ err.T) * (h @ h.T)  # (T, T) gradient overlaps
    influence = sim @ token_adv  # effect of the whole group update on each token
    return token_adv * influence
