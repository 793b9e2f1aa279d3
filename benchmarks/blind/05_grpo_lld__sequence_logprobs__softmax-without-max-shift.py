"""
notebook: 05_grpo_lld
function: sequence_logprobs
slip: the log-softmax is written by hand as log(exp(z) / sum exp(z)) without subtracting each row's max, so large logits overflow float32 (NaN) and tokens far below the favourite give -inf, where log_softmax stays finite.
"""

import torch


def sequence_logprobs(logits, tokens, mask):
    """Sequence log likelihood: masked sum of per-token log probabilities."""
    for name, x, nd in (("logits", logits, 3), ("tokens", tokens, 2), ("mask", mask, 2)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a tensor")
        if x.dim() != nd:
            raise ValueError(f"{name} must be {nd}-D")
    B, T, V = logits.shape
    if tokens.shape != (B, T) or mask.shape != (B, T):
        raise ValueError("tokens and mask must have shape (B, T) matching logits")
    if not logits.is_floating_point():
        raise ValueError("logits must be a floating tensor")
    if not torch.isfinite(logits).all():
        raise ValueError("logits hold NaN or inf")
    if tokens.is_floating_point() or tokens.dtype == torch.bool or tokens.is_complex():
        raise ValueError("tokens must be integer ids")
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= V):
        raise ValueError("token id outside [0, V)")
    if mask.dtype != torch.bool:
        if mask.is_floating_point() and not torch.isfinite(mask).all():
            raise ValueError("mask must be 0/1")
        if not ((mask == 0) | (mask == 1)).all():
            raise ValueError("mask must be 0/1 or bool")
    probs = torch.exp(logits) / torch.exp(logits).sum(dim=-1, keepdim=True)
    logp = torch.log(probs)
    picked = logp.gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1)
    return torch.where(mask.bool(), picked, torch.zeros_like(picked)).sum(dim=-1)
