"""Slip: divides the summed hinge of the correct responses by the batch size B instead of by the
number of correct responses."""

import torch


def smaug_floor(seq_logp, ref_seq_logp, correct):
    """DPO-Positive's floor: mean over correct responses of max(0, ln pi_ref(y) - ln pi_theta(y))."""
    for x, name in ((seq_logp, "seq_logp"), (ref_seq_logp, "ref_seq_logp"), (correct, "correct")):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{name} must be a 1-D torch tensor")
    if not (seq_logp.shape == ref_seq_logp.shape == correct.shape):
        raise ValueError("the three tensors must have the same length")
    for x, name in ((seq_logp, "seq_logp"), (ref_seq_logp, "ref_seq_logp")):
        if not x.is_floating_point() or not torch.isfinite(x).all():
            raise ValueError(f"{name} must be floating and finite")
    if correct.dtype != torch.bool:
        raise ValueError("correct must be bool")
    if not correct.any():
        return seq_logp.sum() * 0.0
    gap = torch.relu(ref_seq_logp.detach() - seq_logp)
    return torch.where(correct, gap, torch.zeros_like(gap)).sum() / seq_logp.shape[0]
