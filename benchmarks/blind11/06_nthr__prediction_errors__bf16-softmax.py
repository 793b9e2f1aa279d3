"""Slip: computes the softmax under a bfloat16 cast (an autocast habit) and casts back, so the
probabilities carry about 3 significant digits instead of the logits' float precision.
"""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_float(x, name):
    """Raise ValueError unless x is a floating tensor without NaN or +-inf."""
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating tensor, got {x.dtype}")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite entries")


def prediction_errors(logits, tokens):
    """Prediction-error vectors e_{y_t} - pi(.|x, y_<t), one per position."""
    _require_tensor(logits, "logits", 2)
    _require_tensor(tokens, "tokens", 1)
    _require_float(logits, "logits")
    T, V = logits.shape
    if tokens.shape[0] != T:
        raise ValueError(f"{tokens.shape[0]} tokens for {T} rows of logits")
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise ValueError("tokens must be an integer tensor")
    if T and (tokens.min() < 0 or tokens.max() >= V):
        raise ValueError(f"a token id is outside [0, {V})")
    probs = torch.softmax(logits.to(torch.bfloat16), dim=-1).to(logits.dtype)
    one_hot = torch.nn.functional.one_hot(tokens.long(), V).to(probs.dtype)
    return one_hot - probs
