"""Slip: sums the masked token log probabilities over dim=0 (the batch) instead of over the positions (dim=-1), returning a (T,) tensor instead of one value per response."""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got {x.dim()}-D")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or +-inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite values")


def sequence_logprobs(logits, tokens, mask):
    """Sequence log likelihood ln pi(y|x) = sum_t mask[b, t] * log_softmax(logits[b, t])[tokens[b, t]]."""
    _require_tensor(logits, "logits", 3)
    _require_tensor(tokens, "tokens", 2)
    _require_tensor(mask, "mask", 2)
    if not torch.is_floating_point(logits):
        raise ValueError("logits must be a floating tensor")
    if tokens.dtype == torch.bool or torch.is_floating_point(tokens):
        raise ValueError("tokens must be integer ids")
    b, t, v = logits.shape
    if tokens.shape != (b, t) or mask.shape != (b, t):
        raise ValueError("tokens and mask must have shape (B, T)")
    if ((tokens < 0) | (tokens >= v)).any():
        raise ValueError("a token id is outside [0, V)")
    if mask.dtype != torch.bool and not ((mask == 0) | (mask == 1)).all():
        raise ValueError("mask values must be 0/1")
    _require_finite(logits, "logits")
    logp = torch.log_softmax(logits, dim=-1)
    picked = logp.gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1)
    return torch.where(mask.bool(), picked, torch.zeros_like(picked)).sum(dim=0)
