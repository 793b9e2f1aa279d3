"""notebook: 05_grpo_lld
function: sequence_logprobs
library: huggingface/trl@f2cd57710ae3 trl/trainer/utils.py (selective_log_softmax)
slip: none: agrees with the text (per position the chosen logit minus the row's logsumexp, as selective_log_softmax computes it; the masked sum over positions is the text's, done by multiplying by the mask as the trainer does)."""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    """Raise ValueError if the floating tensor x holds NaN or inf."""
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def sequence_logprobs(logits, tokens, mask):
    """ln pi(y|x): TRL's selective log-softmax per position, summed over the masked positions."""
    _require_tensor(logits, "logits", 3)
    _require_tensor(tokens, "tokens", 2)
    _require_tensor(mask, "mask", 2)
    if not logits.is_floating_point():
        raise ValueError(f"logits must be a floating tensor, got {logits.dtype}")
    _require_finite(logits, "logits")
    batch, width, vocab = logits.shape
    if tuple(tokens.shape) != (batch, width) or tuple(mask.shape) != (batch, width):
        raise ValueError(
            f"tokens {tuple(tokens.shape)} and mask {tuple(mask.shape)} must both be {(batch, width)}"
        )
    if tokens.dtype == torch.bool or tokens.is_floating_point() or tokens.is_complex():
        raise ValueError(f"tokens must be an integer tensor, got {tokens.dtype}")
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab):
        raise ValueError(f"a token id lies outside [0, {vocab})")
    if not ((mask == 0) | (mask == 1)).all():
        raise ValueError("mask values must be 0/1 or bool")
    index = tokens.long().unsqueeze(-1)
    if logits.dtype in (torch.float32, torch.float64):
        chosen = torch.gather(logits, dim=-1, index=index).squeeze(-1)
        # one row of logits at a time through logsumexp, as the library does to cap memory
        normaliser = torch.stack([torch.logsumexp(row, dim=-1) for row in logits])
        per_token = chosen - normaliser
    else:
        # half precision: the library falls back to log_softmax row by row, then gathers
        per_token = torch.stack(
            [
                torch.log_softmax(row, dim=-1).gather(dim=-1, index=ids).squeeze(-1)
                for row, ids in zip(logits, index)
            ]
        )
    return (per_token * mask.to(per_token.dtype)).sum(dim=-1)
