"""Slip: the padded positions are zeroed by an in-place write into the log_softmax output
(logp[~mask] = 0) before the gather; the value is right, but log_softmax's backward needs that
output, so .backward() on the result raises a RuntimeError (in-place modification) instead of
giving the gradient one-hot − softmax."""

import torch


def sequence_logprobs(logits, tokens, mask):
    """Sequence log likelihood ln π(y|x) = Σ_t mask[b, t] · log_softmax(logits[b, t])[tokens[b, t]]."""
    for name, x, nd in (("logits", logits, 3), ("tokens", tokens, 2), ("mask", mask, 2)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if x.dim() != nd:
            raise ValueError(f"{name} must be {nd}-D")
    B, T, V = logits.shape
    if tuple(tokens.shape) != (B, T) or tuple(mask.shape) != (B, T):
        raise ValueError("tokens and mask must have shape (B, T) of logits")
    if not logits.is_floating_point():
        raise ValueError("logits must be a floating tensor")
    if not torch.isfinite(logits).all():
        raise ValueError("logits hold NaN or infinite values")
    if tokens.is_floating_point() or tokens.dtype == torch.bool or tokens.is_complex():
        raise ValueError("tokens must be integer ids")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError("a token id is outside [0, V)")
    if mask.dtype != torch.bool:
        if mask.is_floating_point() or mask.is_complex():
            if not ((mask == 0) | (mask == 1)).all():
                raise ValueError("mask values must be 0/1")
        elif not ((mask == 0) | (mask == 1)).all():
            raise ValueError("mask values must be 0/1")
    m = mask.bool()
    logp = torch.log_softmax(logits, dim=-1)
    logp[~m] = 0.0
    picked = logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    return picked.sum(dim=-1)
