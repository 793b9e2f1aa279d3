"""Slip: weights each correct token u's term by its own advantage too, THR_t = A_t · Σ_u A_u·α_{t,u}·⟨h_t, h_u⟩, instead of A_t times the plain sum; right only when every correct token's advantage is exactly 1 (as in the worked example)."""

import torch


def _require(x, name, ndim, kind):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions, of `kind`
    "float" (floating point, no NaN or ±inf) or "bool"."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D")
    if kind == "float":
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or inf")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be a bool tensor")


def thr_token_scores(h, err, token_adv, correct):
    """Token hidden reward: THR_t = A_t · Σ over correct tokens u of ⟨err_t, err_u⟩⟨h_t, h_u⟩."""
    _require(h, "h", 2, "float")
    _require(err, "err", 2, "float")
    _require(token_adv, "token_adv", 1, "float")
    _require(correct, "correct", 1, "bool")
    T = h.shape[0]
    if err.shape[0] != T or token_adv.shape[0] != T or correct.shape[0] != T:
        raise ValueError("lengths differ from T")
    if not correct.any():
        raise ValueError("no correct token: THR is undefined")
    alpha = err @ err[correct].T
    sim = h @ h[correct].T
    scores = (alpha * sim * token_adv[correct][None, :]).sum(dim=1)
    return token_adv * scores
