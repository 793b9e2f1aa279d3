"""notebook: 07_beyond_nthr
function: nll_on_correct
slip: with no correct response it returns a fresh constant torch.tensor(0.0), cut off from logp, so the loss has no gradient (backward fails) instead of a zero gradient."""

import torch


def nll_on_correct(logp, mask, correct):
    for name, x in (("logp", logp), ("mask", mask), ("correct", correct)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
    if logp.dim() != 2 or mask.dim() != 2 or logp.shape != mask.shape:
        raise ValueError("logp and mask must be 2-D of the same shape")
    if correct.dim() != 1 or correct.shape[0] != logp.shape[0]:
        raise ValueError("correct must be 1-D of length B")
    if not logp.is_floating_point() or not torch.isfinite(logp).all():
        raise ValueError("logp must be a finite floating tensor")
    if mask.dtype != torch.bool or correct.dtype != torch.bool:
        raise ValueError("mask and correct must be bool tensors")
    sel = mask & correct[:, None]
    picked = torch.where(sel, logp, torch.zeros_like(logp))
    n = int(sel.sum())
    if n == 0:
        return torch.tensor(0.0)
    return -picked.sum() / n
