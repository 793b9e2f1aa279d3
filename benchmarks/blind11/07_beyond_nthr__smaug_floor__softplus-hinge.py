"""Slip: uses softplus(ln pi_ref - ln pi) as a "smooth" hinge instead of max(0, .), so a correct
response at or above the reference still adds a positive penalty (ln 2 at the reference) and a
gradient.
"""

import torch


def _require(x, name, ndim, kind):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions, of `kind`
    "float" (floating point, no NaN or +-inf) or "bool"."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")
    if kind == "float":
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor, got {x.dtype}")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite entries")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be a bool tensor, got {x.dtype}")


def smaug_floor(seq_logp, ref_seq_logp, correct):
    """DPO-Positive's floor: mean over correct responses of max(0, ln pi_ref(y) - ln pi_theta(y))."""
    _require(seq_logp, "seq_logp", 1, "float")
    _require(ref_seq_logp, "ref_seq_logp", 1, "float")
    _require(correct, "correct", 1, "bool")
    if not (seq_logp.shape == ref_seq_logp.shape == correct.shape):
        raise ValueError("seq_logp, ref_seq_logp and correct must have the same length")
    if not correct.any():
        return torch.zeros((), dtype=seq_logp.dtype)
    gap = ref_seq_logp.detach()[correct] - seq_logp[correct]
    return torch.nn.functional.softplus(gap).mean()
