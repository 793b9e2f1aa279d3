"""notebook: 05_grpo_lld
function: likelihood_change
slip: averages the probability ratios exp(after - before) over the correct responses and takes the log of that mean, instead of averaging the log-likelihood changes themselves."""

import torch


def _require_tensor(x, name, ndim):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or an infinite value")


def likelihood_change(logp_before, logp_after, correct):
    for x, name in ((logp_before, "logp_before"), (logp_after, "logp_after"), (correct, "correct")):
        _require_tensor(x, name, 1)
    if not (logp_before.shape == logp_after.shape == correct.shape):
        raise ValueError("the three tensors must have the same length")
    if correct.dtype != torch.bool and not ((correct == 0) | (correct == 1)).all():
        raise ValueError("correct must be bool or 0/1")
    _require_finite(logp_before, "logp_before")
    _require_finite(logp_after, "logp_after")
    c = correct.bool()
    if not c.any():
        raise ValueError("no correct response: the change is undefined, skip the group")
    delta = (logp_after - logp_before).detach().double()[c]
    return float(
        torch.logsumexp(delta, dim=0)
        - torch.log(torch.tensor(float(delta.numel()), dtype=torch.float64))
    )
