"""notebook: 07_beyond_nthr
function: nll_on_correct
slip: divides the correct responses' summed log probabilities by the number of valid tokens of the whole batch (the loss mask's total, incorrect responses included) instead of by the correct responses' valid tokens."""

import torch


def nll_on_correct(logp, mask, correct):
    for x, name in ((logp, "logp"), (mask, "mask"), (correct, "correct")):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
    if logp.dim() != 2 or mask.dim() != 2 or logp.shape != mask.shape:
        raise ValueError("logp and mask must be 2-D tensors of the same shape")
    if correct.dim() != 1 or correct.shape[0] != logp.shape[0]:
        raise ValueError("correct must be 1-D with one entry per row")
    if not logp.is_floating_point() or not torch.isfinite(logp).all():
        raise ValueError("logp must be a finite floating tensor")
    if mask.dtype != torch.bool or correct.dtype != torch.bool:
        raise ValueError("mask and correct must be bool tensors")
    if not correct.any():
        return logp.sum() * 0.0
    keep = mask & correct[:, None]
    picked = torch.where(keep, logp, torch.zeros_like(logp))
    return -picked.sum() / mask.sum().clamp(min=1).to(logp.dtype)
