"""notebook: 05_grpo_lld
function: sequence_logprobs
slip: runs log_softmax in bfloat16 (the mixed-precision habit of large trainers) and casts back afterwards, which loses about 3 significant digits in the sequence log likelihood and its gradient."""

import torch


def _require_tensor(x, name, ndim):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_finite(x, name):
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or an infinite value")


def sequence_logprobs(logits, tokens, mask):
    _require_tensor(logits, "logits", 3)
    _require_tensor(tokens, "tokens", 2)
    _require_tensor(mask, "mask", 2)
    if not logits.is_floating_point():
        raise ValueError("logits must be a floating tensor")
    B, T, V = logits.shape
    if tokens.shape != (B, T) or mask.shape != (B, T):
        raise ValueError(
            f"tokens {tuple(tokens.shape)} and mask {tuple(mask.shape)} must have shape {(B, T)}"
        )
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise ValueError("tokens must be an integer tensor")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError(f"a token id is outside [0, {V})")
    if mask.dtype != torch.bool and not ((mask == 0) | (mask == 1)).all():
        raise ValueError("mask must hold 0/1 or bool values")
    _require_finite(logits, "logits")
    logp = torch.log_softmax(logits.to(torch.bfloat16), dim=-1).to(logits.dtype)
    picked = logp.gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1)
    return torch.where(mask.bool(), picked, torch.zeros_like(picked)).sum(dim=1)
