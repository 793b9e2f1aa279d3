"""Slip: uses the smooth hinge softplus(ln pi_ref - ln pi_theta) instead of max(0, ln pi_ref - ln pi_theta), so correct responses at or above the reference still add a positive floor and a pull."""

import torch


def _require(x, name, ndim, kind):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions, of `kind` "float" or "bool"."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")  # noqa: TRY004 (the contract asks for ValueError)
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D")
    if kind == "float":
        if not torch.is_floating_point(x):
            raise ValueError(f"{name} must be floating")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or inf")
    elif x.dtype != torch.bool:
        raise ValueError(f"{name} must be bool")


def smaug_floor(seq_logp, ref_seq_logp, correct):
    """DPO-Positive's floor: mean over correct responses of max(0, ln pi_ref(y) - ln pi_theta(y))."""
    _require(seq_logp, "seq_logp", 1, "float")
    _require(ref_seq_logp, "ref_seq_logp", 1, "float")
    _require(correct, "correct", 1, "bool")
    if not (seq_logp.shape == ref_seq_logp.shape == correct.shape):
        raise ValueError("lengths differ")
    if not correct.any():
        return (seq_logp * 0.0).sum()
    gap = ref_seq_logp.detach() - seq_logp
    return torch.nn.functional.softplus(gap[correct]).mean()
