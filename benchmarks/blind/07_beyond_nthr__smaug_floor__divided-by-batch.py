"""
notebook: 07_beyond_nthr
function: smaug_floor
slip: the hinge terms of the correct responses are summed and divided by the batch size B instead of by the number of correct responses (a .mean() over the masked vector with zeros on the incorrect ones).
"""

import torch


def smaug_floor(seq_logp, ref_seq_logp, correct):
    """Mean over correct responses of max(0, ln pi_ref(y) - ln pi_theta(y))."""
    for name, x in (("seq_logp", seq_logp), ("ref_seq_logp", ref_seq_logp), ("correct", correct)):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{name} must be a 1-D torch tensor")
    if not (seq_logp.shape == ref_seq_logp.shape == correct.shape):
        raise ValueError("lengths differ")
    for name, x in (("seq_logp", seq_logp), ("ref_seq_logp", ref_seq_logp)):
        if not x.is_floating_point() or not torch.isfinite(x).all():
            raise ValueError(f"{name} must be a finite floating tensor")
    if correct.dtype != torch.bool:
        raise ValueError("correct must be bool")
    if not correct.any():
        return (seq_logp * 0.0).sum()
    gap = torch.relu(ref_seq_logp.detach() - seq_logp)
    gap = torch.where(correct, gap, torch.zeros_like(gap))
    return gap.mean()
