"""notebook: 07_beyond_nthr
function: smaug_floor
slip: averages the hinge over the correct responses that fell below the reference only, instead of over all correct responses."""

import torch


def smaug_floor(seq_logp, ref_seq_logp, correct):
    for name, x in (("seq_logp", seq_logp), ("ref_seq_logp", ref_seq_logp), ("correct", correct)):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{name} must be a 1-D torch tensor")
    if not (seq_logp.shape == ref_seq_logp.shape == correct.shape):
        raise ValueError("lengths differ")
    for name, x in (("seq_logp", seq_logp), ("ref_seq_logp", ref_seq_logp)):
        if not x.is_floating_point() or not torch.isfinite(x).all():
            raise ValueError(f"{name} must be floating and finite")
    if correct.dtype != torch.bool:
        raise ValueError("correct must be bool")
    gap = torch.relu(ref_seq_logp.detach() - seq_logp)
    active = correct & (gap > 0)
    if not active.any():
        return (seq_logp * 0).sum()
    return gap[active].sum() / active.sum()
