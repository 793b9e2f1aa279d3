"""Slip: divides the correct responses' summed log probabilities by the number of valid tokens of the whole batch (mask.sum()) instead of by the valid tokens of the correct responses only."""

import torch


def nll_on_correct(logp, mask, correct):
    """VAPO's NLL: −(the mean over the correct responses' valid tokens) of ln π."""
    for name, x, nd in (("logp", logp, 2), ("mask", mask, 2), ("correct", correct, 1)):
        if not isinstance(x, torch.Tensor) or x.dim() != nd:
            raise ValueError(f"{name} must be a {nd}-D torch tensor")
    if logp.shape != mask.shape:
        raise ValueError("logp and mask have different shapes")
    if correct.shape[0] != logp.shape[0]:
        raise ValueError("correct must have length B")
    if not logp.is_floating_point() or not torch.isfinite(logp).all():
        raise ValueError("logp must be finite floats")
    if mask.dtype != torch.bool or correct.dtype != torch.bool:
        raise ValueError("mask and correct must be bool tensors")
    sel = mask & correct[:, None]
    if not sel.any():
        return (logp * 0).sum()
    total = torch.where(sel, logp, torch.zeros_like(logp)).sum()
    return -total / mask.sum()
