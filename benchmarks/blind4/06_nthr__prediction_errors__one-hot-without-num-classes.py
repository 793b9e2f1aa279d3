"""notebook: 06_nthr
function: prediction_errors
slip: one_hot(tokens) is called without num_classes, so it has max(tokens) + 1 columns instead of V and the subtraction fails (or misaligns) whenever the largest token id is below V − 1."""

import torch


def _require_tensor(x, name, ndim):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_float(x, name):
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def prediction_errors(logits, tokens):
    _require_tensor(logits, "logits", 2)
    _require_tensor(tokens, "tokens", 1)
    _require_float(logits, "logits")
    if tokens.is_floating_point() or tokens.dtype == torch.bool or tokens.is_complex():
        raise ValueError("tokens must be an integer tensor")
    T, V = logits.shape
    if tokens.shape[0] != T:
        raise ValueError(f"{tokens.shape[0]} tokens for {T} rows of logits")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError(f"a token id is outside [0, {V})")
    probs = torch.softmax(logits, dim=-1)
    one_hot = torch.nn.functional.one_hot(tokens.long()).to(probs.dtype)
    return one_hot - probs
