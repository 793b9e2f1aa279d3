"""Slip: computes the log-softmax in bfloat16 (a mixed-precision habit) and casts the result back,
so the sequence log likelihoods are off by about 1e-2 relative instead of being computed in the
logits' precision.
"""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or ±inf."""
    if x.is_floating_point() and not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite values")


def sequence_logprobs(logits, tokens, mask):
    """Sequence log likelihood ln π(y|x) = Σ_t mask[b, t] · log_softmax(logits[b, t])[tokens[b, t]]."""
    _require_tensor(logits, "logits", 3)
    _require_tensor(tokens, "tokens", 2)
    _require_tensor(mask, "mask", 2)
    if not logits.is_floating_point():
        raise ValueError("logits must be a floating tensor")
    _require_finite(logits, "logits")
    B, T, V = logits.shape
    if tokens.shape != (B, T) or mask.shape != (B, T):
        raise ValueError(
            f"tokens {tuple(tokens.shape)} and mask {tuple(mask.shape)} must be {(B, T)}"
        )
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise ValueError("tokens must be an integer tensor")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError(f"a token id is outside [0, {V})")
    if not ((mask == 0) | (mask == 1)).all():
        raise ValueError("mask values must be 0/1 or bool")
    logp = torch.log_softmax(logits.to(torch.bfloat16), dim=-1).to(logits.dtype)
    picked = logp.gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1)
    return torch.where(mask.bool(), picked, torch.zeros_like(picked)).sum(dim=-1)
