"""
notebook: 07_beyond_nthr
function: smaug_floor
slip: averages the hinge only over the correct responses that are strictly below the reference (the ones where it is active) instead of over all correct responses.
"""

import torch


def smaug_floor(seq_logp, ref_seq_logp, correct):
    for x, n in ((seq_logp, "seq_logp"), (ref_seq_logp, "ref_seq_logp"), (correct, "correct")):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{n} must be a 1-D torch tensor")
    if not (seq_logp.shape == ref_seq_logp.shape == correct.shape):
        raise ValueError("lengths differ")
    for x, n in ((seq_logp, "seq_logp"), (ref_seq_logp, "ref_seq_logp")):
        if not x.is_floating_point() or not torch.isfinite(x).all():
            raise ValueError(f"{n} must be finite floating")
    if correct.dtype != torch.bool:
        raise ValueError("correct must be bool")
    if not correct.any():
        return seq_logp.sum() * 0.0
    gap = torch.relu(ref_seq_logp.detach() - seq_logp)
    active = correct & (gap > 0)
    if not active.any():
        return (gap * 0.0).sum()
    return gap[active].sum() / active.sum()
