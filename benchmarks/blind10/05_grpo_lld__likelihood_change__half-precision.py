"""Slip: casts both log-likelihood tensors to float16 before subtracting (to save memory), instead of keeping their precision, so sequence log likelihoods of a few tens of nats lose their last digits (steps of 1/32 near −40)."""

import torch


def likelihood_change(logp_before, logp_after, correct):
    """Deng et al.'s Eq. 2 for one group: mean over CORRECT responses of ln π_θ′(y⁺) − ln π_θ(y⁺)."""
    for name, x in (("logp_before", logp_before), ("logp_after", logp_after), ("correct", correct)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if x.dim() != 1:
            raise ValueError(f"{name} must be 1-D")
    if not (logp_before.shape == logp_after.shape == correct.shape):
        raise ValueError("the three tensors must have the same length")
    for name, x in (("logp_before", logp_before), ("logp_after", logp_after)):
        if not x.is_floating_point() or not torch.isfinite(x).all():
            raise ValueError(f"{name} must be finite floats")
    if correct.dtype != torch.bool:
        if correct.is_floating_point() or not ((correct == 0) | (correct == 1)).all():
            raise ValueError("correct must be bool or 0/1")
    sel = correct.bool()
    if not sel.any():
        raise ValueError("no correct response: the change is undefined")
    diff = logp_after.detach().half() - logp_before.detach().half()
    return float(diff[sel].float().mean())
