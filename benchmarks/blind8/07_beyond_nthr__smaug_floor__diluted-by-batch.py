"""Slip: divides the correct responses' summed hinge by the batch size B instead of by the number
of correct responses (a masked mean with the wrong count).
"""

import torch


def _require(x, name, ndim, kind):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions, of `kind`
    "float" (floating point, no NaN or ±inf) or "bool"."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")
    if kind == "float":
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating tensor")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or infinite values")
    elif kind == "bool":
        if x.dtype != torch.bool:
            raise ValueError(f"{name} must be a bool tensor")
    else:
        raise ValueError(f"unknown kind {kind!r}")


def smaug_floor(seq_logp, ref_seq_logp, correct):
    """DPO-Positive's floor: mean over correct responses of max(0, ln π_ref(y) − ln π_θ(y))."""
    _require(seq_logp, "seq_logp", 1, "float")
    _require(ref_seq_logp, "ref_seq_logp", 1, "float")
    _require(correct, "correct", 1, "bool")
    if not (seq_logp.shape == ref_seq_logp.shape == correct.shape):
        raise ValueError("seq_logp, ref_seq_logp and correct must have the same length")
    if not correct.any():
        return (seq_logp * 0.0).sum()
    gap = torch.relu(ref_seq_logp.detach() - seq_logp)
    return torch.where(correct, gap, torch.zeros_like(gap)).sum() / correct.numel()
