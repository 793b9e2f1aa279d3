"""
notebook: 06_nthr
function: prediction_errors
slip: subtracts the elementwise sigmoid of the logits (the binary cross-entropy gradient) instead of the softmax over the vocabulary, so rows no longer sum to 0.
"""

import torch


def _require_tensor(x, name, ndim):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions")


def _require_float(x, name):
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def prediction_errors(logits, tokens):
    _require_tensor(logits, "logits", 2)
    _require_tensor(tokens, "tokens", 1)
    _require_float(logits, "logits")
    T, V = logits.shape
    if tokens.shape[0] != T:
        raise ValueError(f"{tokens.shape[0]} tokens for {T} positions")
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise ValueError("tokens must be integer ids")
    if (tokens < 0).any() or (tokens >= V).any():
        raise ValueError("token id outside [0, V)")
    probs = torch.sigmoid(logits)  # per-vocabulary-entry probability, stable for large logits
    onehot = torch.nn.functional.one_hot(tokens.long(), V).to(probs.dtype)
    return onehot - probs
