"""Slip: weights each pair by the advantage A_u of the correct token u it is scored against (Σ_u
A_u·α·⟨h, h⟩) instead of multiplying the score by the token's own advantage A_t; every THR takes
the correct responses' sign.
"""

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
            raise ValueError(f"{name} must be a floating tensor")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite values")
    elif kind == "bool":
        if x.dtype != torch.bool:
            raise ValueError(f"{name} must be a bool tensor")
    else:
        raise ValueError(f"unknown kind {kind!r}")


def thr_token_scores(h, err, token_adv, correct):
    """Token hidden reward: THR_t = A_t · Σ over correct tokens u of ⟨err_t, err_u⟩⟨h_t, h_u⟩."""
    _require(h, "h", 2, "float")
    _require(err, "err", 2, "float")
    _require(token_adv, "token_adv", 1, "float")
    _require(correct, "correct", 1, "bool")
    T = h.shape[0]
    if err.shape[0] != T or token_adv.shape[0] != T or correct.shape[0] != T:
        raise ValueError("h, err, token_adv and correct must have the same length T")
    if not correct.any():
        raise ValueError("no correct token: THR is undefined")
    h_c, err_c, adv_c = h[correct], err[correct], token_adv[correct]
    pair = (err @ err_c.T) * (h @ h_c.T)  # (T, Nc)
    return (pair * adv_c[None, :]).sum(dim=1)
