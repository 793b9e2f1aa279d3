"""notebook: 05_grpo_lld
function: likelihood_change
slip: the correct-response mask is applied to logp_after only, so it returns the mean over the correct responses of ln π_θ′ minus the mean over ALL responses of ln π_θ, instead of the mean over the correct responses of the difference."""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or ±inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite values")


def likelihood_change(logp_before, logp_after, correct):
    """Deng et al.'s Eq. 2 for one group: mean over CORRECT responses of ln π_θ′(y⁺) − ln π_θ(y⁺)."""
    for x, name in ((logp_before, "logp_before"), (logp_after, "logp_after"), (correct, "correct")):
        _require_tensor(x, name, 1)
    if not (logp_before.shape == logp_after.shape == correct.shape):
        raise ValueError("the three tensors must have the same length")
    if correct.dtype != torch.bool:
        if (
            correct.is_floating_point()
            or correct.is_complex()
            or not ((correct == 0) | (correct == 1)).all()
        ):
            raise ValueError("correct must be bool or 0/1")
    for x, name in ((logp_before, "logp_before"), (logp_after, "logp_after")):
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor")
        _require_finite(x, name)
    c = correct.bool()
    if not c.any():
        raise ValueError("no correct response: the change is undefined, skip the group")
    return float(logp_after.detach()[c].mean() - logp_before.detach().mean())
