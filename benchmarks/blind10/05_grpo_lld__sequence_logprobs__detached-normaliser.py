"""Slip: subtracts a detached logsumexp (logits − logsumexp(logits).detach(), a "stable log-softmax" written by hand) so the values are right but the gradient with respect to the logits is only the one-hot term, missing −softmax."""

import torch


def sequence_logprobs(logits, tokens, mask):
    """Sequence log likelihood ln π(y|x) = Σ_t mask[b, t] · log_softmax(logits[b, t])[tokens[b, t]]."""
    for name, x, nd in (("logits", logits, 3), ("tokens", tokens, 2), ("mask", mask, 2)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
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
        raise ValueError("tokens must be an integer tensor")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError("a token id is outside [0, V)")
    if mask.dtype != torch.bool and not ((mask == 0) | (mask == 1)).all():
        raise ValueError("mask must be bool or 0/1")
    logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True).detach()
    picked = logp.gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1)
    return torch.where(mask.bool(), picked, torch.zeros_like(picked)).sum(dim=1)
