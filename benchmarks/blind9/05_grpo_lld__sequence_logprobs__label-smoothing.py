"""Slip: takes the token log likelihood as minus cross_entropy with label_smoothing=0.1 (copied
from an SFT config), which mixes in the mean log probability of the whole vocabulary, instead of
log_softmax at the token."""

import torch
import torch.nn.functional as F


def sequence_logprobs(logits, tokens, mask):
    """Sequence log likelihood sum_t mask[b, t] * log_softmax(logits[b, t])[tokens[b, t]]."""
    for x, name, nd in ((logits, "logits", 3), (tokens, "tokens", 2), (mask, "mask", 2)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if x.dim() != nd:
            raise ValueError(f"{name} must be {nd}-D")
    B, T, V = logits.shape
    if tokens.shape != (B, T) or mask.shape != (B, T):
        raise ValueError("tokens and mask must have shape (B, T)")
    if not logits.is_floating_point():
        raise ValueError("logits must be a floating tensor")
    if not torch.isfinite(logits).all():
        raise ValueError("logits hold NaN or inf")
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise ValueError("tokens must be integer ids")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError("a token id is outside [0, V)")
    if not ((mask == 0) | (mask == 1)).all():
        raise ValueError("mask values must be 0/1")
    per_token = -F.cross_entropy(
        logits.transpose(1, 2), tokens, reduction="none", label_smoothing=0.1
    )
    return torch.where(mask.bool(), per_token, torch.zeros_like(per_token)).sum(dim=1)
