"""Slip: casts the logits to bfloat16 before log_softmax (a mixed-precision habit) and sums in that dtype, so every log probability is rounded to 8 bits of mantissa instead of being computed in the logits' own precision."""

import torch


def sequence_logprobs(logits, tokens, mask):
    """Sequence log likelihood ln pi(y|x) = sum_t mask[b, t] * log_softmax(logits[b, t])[tokens[b, t]]."""
    for name, x in (("logits", logits), ("tokens", tokens), ("mask", mask)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")  # noqa: TRY004 (the contract asks for ValueError)
    if logits.dim() != 3 or tokens.dim() != 2 or mask.dim() != 2:
        raise ValueError("logits must be (B, T, V), tokens and mask (B, T)")
    if tokens.shape != logits.shape[:2] or mask.shape != tokens.shape:
        raise ValueError("shapes do not match")
    if not torch.is_floating_point(logits):
        raise ValueError("logits must be a floating tensor")
    if not torch.isfinite(logits).all():
        raise ValueError("logits hold NaN or inf")
    if torch.is_floating_point(tokens) or tokens.dtype == torch.bool:
        raise ValueError("tokens must be integer ids")
    V = logits.shape[-1]
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError("a token id is outside [0, V)")
    if not ((mask == 0) | (mask == 1)).all():
        raise ValueError("mask must be 0/1 or bool")
    logp = torch.log_softmax(logits.to(torch.bfloat16), dim=-1)
    tok = logp.gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1)
    tok = torch.where(mask.bool(), tok, torch.zeros_like(tok))
    return tok.sum(dim=1).to(logits.dtype)
