"""Slip: divides the summed hinge by the number of correct responses that fell below the reference, instead of by the number of correct responses."""

import torch


def smaug_floor(seq_logp, ref_seq_logp, correct):
    """DPO-Positive's floor: mean over correct responses of max(0, ln pi_ref(y) - ln pi_theta(y))."""
    for name, x in (("seq_logp", seq_logp), ("ref_seq_logp", ref_seq_logp), ("correct", correct)):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{name} must be a 1-D torch tensor")
    if not (seq_logp.shape == ref_seq_logp.shape == correct.shape):
        raise ValueError("lengths differ")
    for name, x in (("seq_logp", seq_logp), ("ref_seq_logp", ref_seq_logp)):
        if not torch.is_floating_point(x) or not torch.isfinite(x).all():
            raise ValueError(f"{name} must be floating and finite")
    if correct.dtype != torch.bool:
        raise ValueError("correct must be bool")
    gap = torch.relu(ref_seq_logp.detach() - seq_logp)
    hinge = torch.where(correct, gap, torch.zeros_like(gap))
    below = (correct & (gap > 0)).sum()
    if correct.sum() == 0:
        return (seq_logp * 0).sum()
    return hinge.sum() / below.clamp(min=1)
