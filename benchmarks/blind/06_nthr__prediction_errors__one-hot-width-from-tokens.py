"""
notebook: 06_nthr
function: prediction_errors
slip: the one-hot is built with torch.nn.functional.one_hot(tokens) without num_classes=V, so its width is max(tokens) + 1 instead of V; whenever the largest token id is below V - 1 the subtraction fails to broadcast (RuntimeError) instead of returning the (T, V) errors.
"""

import torch
import torch.nn.functional as F


def _require_tensor(x, name, ndim):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got {x.dim()}-D")


def _require_float(x, name):
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def prediction_errors(logits, tokens):
    """Row t: one_hot(tokens[t]) - softmax(logits[t])."""
    _require_tensor(logits, "logits", 2)
    _require_tensor(tokens, "tokens", 1)
    _require_float(logits, "logits")
    T, V = logits.shape
    if tokens.shape[0] != T:
        raise ValueError(f"{tokens.shape[0]} tokens for {T} rows of logits")
    if tokens.is_floating_point() or tokens.dtype == torch.bool or tokens.is_complex():
        raise ValueError("tokens must be integer ids")
    if T and (tokens.min() < 0 or tokens.max() >= V):
        raise ValueError("token id outside [0, V)")
    probs = torch.softmax(logits, dim=-1)
    onehot = F.one_hot(tokens.long()).to(probs.dtype)
    return onehot - probs
