"""Slip: the change is averaged in probability space, log of the mean ratio π_θ′(y⁺)/π_θ(y⁺) over the
correct responses (logsumexp − log k), instead of the mean of the log likelihood differences; the
two agree only when every correct response changes by the same amount."""

import math

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
        if not x.is_floating_point():
            raise ValueError(f"{name} must be floating")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite values")
    if correct.dtype != torch.bool:
        if (
            correct.is_floating_point()
            or correct.is_complex()
            or not ((correct == 0) | (correct == 1)).all()
        ):
            raise ValueError("correct must be bool or 0/1")
    c = correct.bool()
    k = int(c.sum())
    if k == 0:
        raise ValueError("no correct response: the change is undefined, skip the group")
    d = (logp_after.detach() - logp_before.detach())[c].double()
    return float(torch.logsumexp(d, dim=0) - math.log(k))
