"""Slip: writes the softmax by hand and subtracts the max over dim=0 (each vocabulary column's max across positions) instead of each row's max, so a row far below another row's max loses its probabilities to underflow (all-zero rows give 0/0 = NaN)."""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got {x.dim()}-D")


def _require_float(x, name):
    """Raise ValueError unless x is a floating tensor without NaN or +-inf."""
    if not torch.is_floating_point(x):
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite values")


def prediction_errors(logits, tokens):
    """Prediction-error vectors e_{y_t} - pi(.|x, y_<t), one per position."""
    _require_tensor(logits, "logits", 2)
    _require_tensor(tokens, "tokens", 1)
    _require_float(logits, "logits")
    if tokens.dtype == torch.bool or torch.is_floating_point(tokens):
        raise ValueError("tokens must be integer ids")
    t, v = logits.shape
    if tokens.shape[0] != t:
        raise ValueError("tokens must have one entry per row of logits")
    if ((tokens < 0) | (tokens >= v)).any():
        raise ValueError("a token id is outside [0, V)")
    z = logits - logits.max(dim=0, keepdim=True).values
    ez = torch.exp(z)
    probs = ez / ez.sum(dim=-1, keepdim=True)
    one_hot = torch.nn.functional.one_hot(tokens.long(), v).to(probs.dtype)
    return one_hot - probs
