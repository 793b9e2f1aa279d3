"""notebook: 07_beyond_nthr
function: thr_token_scores
slip: each correct token u's term is also weighted by its own advantage A_u (Σ_u A_u ⟨err_t, err_u⟩⟨h_t, h_u⟩, as if summing advantage-weighted gradients), instead of the plain sum over correct tokens times A_t."""

import torch


def _require(x, name, ndim, kind):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")
    if kind == "float":
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or inf")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be a bool tensor")


def thr_token_scores(h, err, token_adv, correct):
    _require(h, "h", 2, "float")
    _require(err, "err", 2, "float")
    _require(token_adv, "token_adv", 1, "float")
    _require(correct, "correct", 1, "bool")
    T = h.shape[0]
    if err.shape[0] != T or token_adv.shape[0] != T or correct.shape[0] != T:
        raise ValueError("h, err, token_adv and correct must have the same length T")
    if not correct.any():
        raise ValueError("no correct token: THR is undefined")
    h, err, adv = h.detach(), err.detach(), token_adv.detach()
    pair = (err @ err[correct].T) * (h @ h[correct].T)  # (T, n_correct)
    scores = (pair * adv[correct]).sum(dim=1)
    return adv * scores
