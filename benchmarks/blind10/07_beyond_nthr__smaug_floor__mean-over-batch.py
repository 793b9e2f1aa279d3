"""Slip: divides the correct responses' summed hinge by the batch size B (a mean over all responses with the incorrect ones counted as 0) instead of by the number of correct responses."""

import torch


def smaug_floor(seq_logp, ref_seq_logp, correct):
    """DPO-Positive's floor: mean over correct responses of max(0, ln π_ref(y) − ln π_θ(y))."""
    for name, x in (("seq_logp", seq_logp), ("ref_seq_logp", ref_seq_logp), ("correct", correct)):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{name} must be a 1-D torch tensor")
    if not (seq_logp.shape == ref_seq_logp.shape == correct.shape):
        raise ValueError("lengths differ")
    for name, x in (("seq_logp", seq_logp), ("ref_seq_logp", ref_seq_logp)):
        if not x.is_floating_point() or not torch.isfinite(x).all():
            raise ValueError(f"{name} must be finite floats")
    if correct.dtype != torch.bool:
        raise ValueError("correct must be a bool tensor")
    if not correct.any():
        return (seq_logp * 0).sum()
    gap = torch.relu(ref_seq_logp.detach() - seq_logp)
    hinge = torch.where(correct, gap, torch.zeros_like(gap))
    return hinge.sum() / correct.numel()
