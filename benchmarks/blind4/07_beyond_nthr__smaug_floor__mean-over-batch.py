"""notebook: 07_beyond_nthr
function: smaug_floor
slip: the hinge of the correct responses is averaged over all B responses (incorrect ones counted as 0) instead of over the correct responses only."""

import torch


def smaug_floor(seq_logp, ref_seq_logp, correct):
    for name, x in (("seq_logp", seq_logp), ("ref_seq_logp", ref_seq_logp), ("correct", correct)):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{name} must be a 1-D torch tensor")
    if not (seq_logp.shape[0] == ref_seq_logp.shape[0] == correct.shape[0]):
        raise ValueError("the three tensors must have the same length")
    for name, x in (("seq_logp", seq_logp), ("ref_seq_logp", ref_seq_logp)):
        if not x.is_floating_point() or not torch.isfinite(x).all():
            raise ValueError(f"{name} must be a finite floating tensor")
    if correct.dtype != torch.bool:
        raise ValueError("correct must be a bool tensor")
    gap = torch.relu(ref_seq_logp.detach() - seq_logp)
    floor = torch.where(correct, gap, torch.zeros_like(gap))
    if not correct.any():
        return floor.sum() * 0.0
    return floor.sum() / correct.shape[0]
