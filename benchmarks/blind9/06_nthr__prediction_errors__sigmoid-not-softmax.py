"""Slip: subtracts the elementwise sigmoid of the logits (a multi-label habit) instead of the
softmax over the vocabulary, so the rows no longer sum to 0."""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got {x.dim()}-D")


def _require_float(x, name):
    """Raise ValueError unless x is a floating tensor without NaN or inf."""
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def prediction_errors(logits, tokens):
    """Prediction-error vectors e_{y_t} - pi(.|x, y_<t), one per position."""
    _require_tensor(logits, "logits", 2)
    _require_tensor(tokens, "tokens", 1)
    _require_float(logits, "logits")
    T, V = logits.shape
    if tokens.shape[0] != T:
        raise ValueError("one token per row of logits")
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise ValueError("tokens must be integer ids")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError("a token id is outside [0, V)")
    probs = torch.sigmoid(logits)
    return torch.nn.functional.one_hot(tokens, V).to(probs.dtype) - probs
