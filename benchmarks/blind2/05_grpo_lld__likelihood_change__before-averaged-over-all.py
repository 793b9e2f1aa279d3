"""
notebook: 05_grpo_lld
function: likelihood_change
slip: subtracts the mean of logp_before over ALL G responses from the mean of logp_after over the correct ones, instead of averaging after - before over the correct responses only.
"""

import torch


def _require_tensor(x, name, ndim):
    if not isinstance(x, torch.Tensor) or x.dim() != ndim:
        raise ValueError(f"{name} must be a {ndim}-D torch tensor")


def likelihood_change(logp_before, logp_after, correct):
    for x, n in ((logp_before, "logp_before"), (logp_after, "logp_after"), (correct, "correct")):
        _require_tensor(x, n, 1)
    if not (len(logp_before) == len(logp_after) == len(correct)):
        raise ValueError("tensors must have the same length")
    if correct.dtype != torch.bool:
        if correct.is_floating_point() or not ((correct == 0) | (correct == 1)).all():
            raise ValueError("correct must be bool or 0/1")
    if not torch.isfinite(logp_before).all() or not torch.isfinite(logp_after).all():
        raise ValueError("log likelihoods must be finite")
    c = correct.bool()
    if not c.any():
        raise ValueError("no correct response: the change is undefined")
    after = logp_after.detach().double()[c].mean()
    before = logp_before.detach().double().mean()
    return float(after - before)
