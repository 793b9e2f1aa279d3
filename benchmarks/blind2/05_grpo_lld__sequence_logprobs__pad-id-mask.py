"""
notebook: 05_grpo_lld
function: sequence_logprobs
slip: builds the response mask from the token ids (tokens != 0, treating id 0 as the pad token, HF-style) instead of using the mask argument, so masked positions with a nonzero id are summed and valid tokens with id 0 are dropped.
"""

import torch


def _require_tensor(x, name, ndim):
    if not torch.is_tensor(x):
        raise ValueError(f"{name} is not a tensor")
    if x.ndim != ndim:
        raise ValueError(f"{name} should have {ndim} dims, has {x.ndim}")


def sequence_logprobs(logits, tokens, mask):
    _require_tensor(logits, "logits", 3)
    _require_tensor(tokens, "tokens", 2)
    _require_tensor(mask, "mask", 2)
    B, T, V = logits.shape
    if tokens.shape != (B, T) or mask.shape != (B, T):
        raise ValueError("tokens and mask must have shape (B, T) matching logits")
    if not logits.is_floating_point():
        raise ValueError("logits must be floating point")
    if not torch.isfinite(logits).all():
        raise ValueError("logits hold NaN or inf")
    if tokens.is_floating_point() or tokens.dtype == torch.bool or tokens.is_complex():
        raise ValueError("tokens must be integer ids")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError("token id outside [0, V)")
    if mask.dtype != torch.bool and not ((mask == 0) | (mask == 1)).all():
        raise ValueError("mask must be bool or 0/1")
    pad_id = 0
    attention = tokens.ne(pad_id)
    logp = torch.log_softmax(logits, dim=-1)
    picked = logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    return torch.where(attention, picked, torch.zeros_like(picked)).sum(dim=-1)
