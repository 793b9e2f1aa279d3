"""notebook: 05_grpo_lld
function: sequence_logprobs
slip: computes the log-softmax in bfloat16 (a mixed-precision habit) and casts back, instead of in the logits' own precision, so the log probabilities are off by about 1e-2 relative."""

import torch


def sequence_logprobs(logits, tokens, mask):
    for name, x, nd in (("logits", logits, 3), ("tokens", tokens, 2), ("mask", mask, 2)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if x.dim() != nd:
            raise ValueError(f"{name} must be {nd}-D, got shape {tuple(x.shape)}")
    if not logits.is_floating_point():
        raise ValueError("logits must be a floating tensor")
    if not torch.isfinite(logits).all():
        raise ValueError("logits hold NaN or inf")
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise ValueError("tokens must be integer ids")
    B, T, V = logits.shape
    if tokens.shape != (B, T) or mask.shape != (B, T):
        raise ValueError("tokens and mask must have shape (B, T) of the logits")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError("a token id is outside [0, V)")
    if mask.dtype != torch.bool and not ((mask == 0) | (mask == 1)).all():
        raise ValueError("mask values must be 0/1")
    logp = torch.log_softmax(logits.to(torch.bfloat16), dim=-1).to(logits.dtype)
    picked = logp.gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1)
    return torch.where(mask.bool(), picked, torch.zeros_like(picked)).sum(dim=-1)
