"""
notebook: 05_grpo_lld
function: likelihood_change
slip: the numerator sums the change of every response in the group while the denominator counts only the correct ones, instead of summing the changes of the correct responses alone.
"""

import torch


def likelihood_change(logp_before, logp_after, correct):
    """Mean over correct responses of ln pi_theta'(y+) - ln pi_theta(y+)."""
    for name, x in (("logp_before", logp_before), ("logp_after", logp_after), ("correct", correct)):
        if not isinstance(x, torch.Tensor) or x.dim() != 1:
            raise ValueError(f"{name} must be a 1-D tensor")
    if not (len(logp_before) == len(logp_after) == len(correct)):
        raise ValueError("the three tensors must have the same length")
    if not (torch.isfinite(logp_before).all() and torch.isfinite(logp_after).all()):
        raise ValueError("log likelihoods must be finite")
    if correct.dtype != torch.bool:
        if correct.is_floating_point() or not ((correct == 0) | (correct == 1)).all():
            raise ValueError("correct must be bool or 0/1")
    c = correct.bool()
    n_correct = int(c.sum())
    if n_correct == 0:
        raise ValueError("no correct response: the change is undefined")
    delta = (logp_after - logp_before).detach()
    return float(delta.sum() / n_correct)
