"""notebook: 05_grpo_lld
function: sequence_logprobs
slip: the mask is applied to the logits (masked positions set to 0, i.e. a uniform distribution) before the log-softmax and the sum then runs over every position, so each masked position adds −log V instead of 0."""

import torch


def sequence_logprobs(logits, tokens, mask):
    """Sequence log likelihood ln π(y|x) = Σ_t mask[b, t] · log_softmax(logits[b, t])[tokens[b, t]]."""
    for x, name, ndim in ((logits, "logits", 3), (tokens, "tokens", 2), (mask, "mask", 2)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch tensor")
        if x.dim() != ndim:
            raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")
    if not logits.is_floating_point():
        raise ValueError("logits must be a floating tensor")
    if tokens.is_floating_point() or tokens.dtype == torch.bool or tokens.is_complex():
        raise ValueError("tokens must be an integer tensor")
    if tokens.shape != logits.shape[:2] or mask.shape != tokens.shape:
        raise ValueError("shapes of logits (B, T, V), tokens (B, T) and mask (B, T) do not match")
    if not torch.isfinite(logits).all():
        raise ValueError("logits hold NaN or infinite values")
    V = logits.shape[-1]
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= V):
        raise ValueError(f"a token id is outside [0, {V})")
    if mask.dtype != torch.bool and not ((mask == 0) | (mask == 1)).all():
        raise ValueError("mask values must be 0/1 or bool")
    m = mask.bool()
    masked_logits = torch.where(m.unsqueeze(-1), logits, torch.zeros_like(logits))
    logp = torch.log_softmax(masked_logits, dim=-1)
    picked = logp.gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1)
    return picked.sum(dim=-1)
