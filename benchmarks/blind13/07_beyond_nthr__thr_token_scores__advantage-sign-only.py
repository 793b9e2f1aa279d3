"""Slip: multiplies the influence sum by sign(A_t) instead of A_t, so the advantage's magnitude is lost (right only when every advantage is 0 or +-1)."""

import torch


def _require(x, name, ndim, kind):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions, of `kind` "float" or "bool"."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")  # noqa: TRY004 (the contract asks for ValueError)
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D")
    if kind == "float":
        if not torch.is_floating_point(x):
            raise ValueError(f"{name} must be floating")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or inf")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be bool")


def thr_token_scores(h, err, token_adv, correct):
    """Token hidden reward: THR_t = A_t * sum over correct tokens u of <err_t, err_u><h_t, h_u>."""
    _require(h, "h", 2, "float")
    _require(err, "err", 2, "float")
    _require(token_adv, "token_adv", 1, "float")
    _require(correct, "correct", 1, "bool")
    T = h.shape[0]
    if err.shape[0] != T or token_adv.shape[0] != T or correct.shape[0] != T:
        raise ValueError("lengths differ")
    if not correct.any():
        raise ValueError("no correct token")
    alpha = err @ err[correct].T
    sim = h @ h[correct].T
    return torch.sign(token_adv) * (alpha * sim).sum(dim=1)
