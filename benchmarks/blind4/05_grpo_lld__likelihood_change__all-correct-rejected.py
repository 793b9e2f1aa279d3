"""notebook: 05_grpo_lld
function: likelihood_change
slip: a group whose responses are all correct also raises ValueError (the protocol's skip rule for all-equal groups applied here), although the change is defined there: only a group with no correct response should raise."""

import torch


def likelihood_change(logp_before, logp_after, correct):
    for name, x in (("logp_before", logp_before), ("logp_after", logp_after), ("correct", correct)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if x.dim() != 1:
            raise ValueError(f"{name} must be 1-D, got shape {tuple(x.shape)}")
    if not (len(logp_before) == len(logp_after) == len(correct)):
        raise ValueError("the three tensors must have the same length")
    if correct.dtype != torch.bool:
        if correct.is_floating_point() or not ((correct == 0) | (correct == 1)).all():
            raise ValueError("correct must be bool or 0/1")
    for name, x in (("logp_before", logp_before), ("logp_after", logp_after)):
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or inf")
    c = correct.bool()
    if not c.any():
        raise ValueError("no correct response: the change is undefined (skip the group)")
    if c.all():
        raise ValueError("every response is correct: the group carries no signal (skip it)")
    return float((logp_after.detach() - logp_before.detach())[c].mean())
