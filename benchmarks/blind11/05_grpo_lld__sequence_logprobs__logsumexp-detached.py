"""Slip: subtracts a detached logsumexp (normaliser treated as a constant "to save memory"), so the
values are right but the gradient with respect to the logits is the one-hot alone instead of
one-hot - softmax.
"""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or +-inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite entries")


def sequence_logprobs(logits, tokens, mask):
    """Sequence log likelihood ln pi(y|x) = sum_t mask[b, t] * log_softmax(logits[b, t])[tokens[b, t]]."""
    _require_tensor(logits, "logits", 3)
    _require_tensor(tokens, "tokens", 2)
    _require_tensor(mask, "mask", 2)
    if not logits.is_floating_point():
        raise ValueError("logits must be a floating tensor")
    B, T, V = logits.shape
    if tokens.shape != (B, T) or mask.shape != (B, T):
        raise ValueError(
            f"tokens {tuple(tokens.shape)} and mask {tuple(mask.shape)} must be ({B}, {T})"
        )
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise ValueError("tokens must be an integer tensor")
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= V):
        raise ValueError(f"a token id is outside [0, {V})")
    if mask.dtype != torch.bool and not ((mask == 0) | (mask == 1)).all():
        raise ValueError("mask entries must be 0/1 or bool")
    _require_finite(logits, "logits")
    logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True).detach()
    picked = logp.gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1)
    return torch.where(mask.bool(), picked, torch.zeros_like(picked)).sum(dim=1)
