"""Slip: when no response is correct returns a fresh torch.tensor(0.0) that is not connected to logp, so .backward() on it fails (and no zero gradient reaches logp), instead of a zero built from logp."""

import torch


def nll_on_correct(logp, mask, correct):
    """VAPO's NLL: -(the mean over the correct responses' valid tokens) of ln pi."""
    for name, x, nd in (("logp", logp, 2), ("mask", mask, 2), ("correct", correct, 1)):
        if not isinstance(x, torch.Tensor) or x.dim() != nd:
            raise ValueError(f"{name} must be a {nd}-D torch tensor")
    if logp.shape != mask.shape or correct.shape[0] != logp.shape[0]:
        raise ValueError("shapes or lengths differ")
    if not torch.is_floating_point(logp) or not torch.isfinite(logp).all():
        raise ValueError("logp must be floating and finite")
    if mask.dtype != torch.bool or correct.dtype != torch.bool:
        raise ValueError("mask and correct must be bool")
    sel = mask & correct.unsqueeze(1)
    n = sel.sum()
    if n == 0:
        return torch.tensor(0.0)
    return -torch.where(sel, logp, torch.zeros_like(logp)).sum() / n
