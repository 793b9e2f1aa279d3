"""notebook: 05_grpo_lld
function: sequence_logprobs
slip: the log-softmax normaliser logsumexp is computed on detached logits (to save memory), so the value is right but the gradient is one-hot(tokens) only, without the − softmax part."""

import torch


def sequence_logprobs(logits, tokens, mask):
    for name, x, nd in (("logits", logits, 3), ("tokens", tokens, 2), ("mask", mask, 2)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if x.dim() != nd:
            raise ValueError(f"{name} must be {nd}-D, got shape {tuple(x.shape)}")
    if not logits.is_floating_point():
        raise ValueError("logits must be a floating tensor")
    if tokens.is_floating_point() or tokens.dtype == torch.bool or tokens.is_complex():
        raise ValueError("tokens must be an integer tensor")
    B, T, V = logits.shape
    if tuple(tokens.shape) != (B, T) or tuple(mask.shape) != (B, T):
        raise ValueError("tokens and mask must have shape (B, T) matching logits")
    if not torch.isfinite(logits).all():
        raise ValueError("logits hold NaN or inf")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError(f"a token id is outside [0, {V})")
    if mask.dtype != torch.bool and not ((mask == 0) | (mask == 1)).all():
        raise ValueError("mask values must be 0/1")
    norm = torch.logsumexp(logits.detach(), dim=-1, keepdim=True)
    logp = logits - norm
    picked = logp.gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1)
    return torch.where(mask.bool(), picked, torch.zeros_like(picked)).sum(dim=-1)
