"""notebook: 07_beyond_nthr
function: nll_on_correct
slip: returns a fresh torch.tensor(0.0) when no response is correct, a constant cut off from logp, instead of a zero that stays in the graph (its backward fails instead of giving a zero gradient)."""

import torch


def nll_on_correct(logp, mask, correct):
    for name, x, nd in (("logp", logp, 2), ("mask", mask, 2), ("correct", correct, 1)):
        if not isinstance(x, torch.Tensor) or x.dim() != nd:
            raise ValueError(f"{name} must be a {nd}-D torch tensor")
    if logp.shape != mask.shape:
        raise ValueError("logp and mask have different shapes")
    if correct.shape[0] != logp.shape[0]:
        raise ValueError("correct must have length B")
    if not logp.is_floating_point() or not torch.isfinite(logp).all():
        raise ValueError("logp must be floating and finite")
    if mask.dtype != torch.bool or correct.dtype != torch.bool:
        raise ValueError("mask and correct must be bool")
    sel = mask & correct.unsqueeze(1)
    n = int(sel.sum())
    if n == 0:
        return torch.tensor(0.0)
    return -torch.where(sel, logp, torch.zeros_like(logp)).sum() / n
