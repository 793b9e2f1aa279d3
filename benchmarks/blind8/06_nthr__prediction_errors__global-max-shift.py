"""Slip: stabilises the softmax by subtracting the maximum of the whole (T, V) tensor instead of
each row's maximum; a row whose logits all lie far (about 100+) below another row's maximum
underflows to 0/0 = NaN.
"""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_float(x, name):
    """Raise ValueError unless x is a floating tensor without NaN or ±inf."""
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise ValueError(f"{name} must be a floating torch tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite values")


def prediction_errors(logits, tokens):
    """Prediction-error vectors e_{y_t} − π(·|x, y_<t), one per position."""
    _require_tensor(logits, "logits", 2)
    _require_tensor(tokens, "tokens", 1)
    _require_float(logits, "logits")
    T, V = logits.shape
    if tokens.shape[0] != T:
        raise ValueError(f"{tokens.shape[0]} tokens for {T} rows of logits")
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise ValueError("tokens must be an integer tensor")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError(f"a token id is outside [0, {V})")
    z = torch.exp(logits - logits.max())
    probs = z / z.sum(dim=-1, keepdim=True)
    return torch.nn.functional.one_hot(tokens.long(), V).to(probs.dtype) - probs
