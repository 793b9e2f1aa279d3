"""Slip: the one-hot vectors are built with torch.nn.functional.one_hot(tokens) without
num_classes=V, so their width is max(tokens) + 1 (inferred from the data) instead of the vocabulary
size V: a shape error unless some token is V − 1."""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_float(x, name):
    """Raise ValueError unless x is a floating tensor without NaN or ±inf."""
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating tensor, got {x.dtype}")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite values")


def prediction_errors(logits, tokens):
    """Prediction-error vectors e_{y_t} − π(·|x, y_<t), one per position."""
    _require_tensor(logits, "logits", 2)
    _require_tensor(tokens, "tokens", 1)
    _require_float(logits, "logits")
    T, V = logits.shape
    if tokens.shape[0] != T:
        raise ValueError(f"{tokens.shape[0]} tokens for {T} positions")
    if tokens.is_floating_point() or tokens.dtype == torch.bool or tokens.is_complex():
        raise ValueError("tokens must be integer ids")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError("a token id is outside [0, V)")
    probs = torch.softmax(logits.detach(), dim=-1)
    onehot = torch.nn.functional.one_hot(tokens.long()).to(probs.dtype)
    return onehot - probs
