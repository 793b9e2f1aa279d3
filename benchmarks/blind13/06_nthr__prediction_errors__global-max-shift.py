"""Slip: stabilises the softmax by subtracting the global maximum of all logits (logits.max()) instead of each row's maximum, so a row whose logits sit far below another row's underflows to exp(...) = 0 and gives 0/0 = NaN."""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")  # noqa: TRY004 (the contract asks for ValueError)
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_float(x, name):
    """Raise ValueError unless x is a floating tensor without NaN or inf."""
    if not isinstance(x, torch.Tensor) or not torch.is_floating_point(x):
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def prediction_errors(logits, tokens):
    """Prediction-error vectors e_{y_t} - pi(.|x, y_<t), one per position."""
    _require_tensor(logits, "logits", 2)
    _require_tensor(tokens, "tokens", 1)
    _require_float(logits, "logits")
    if torch.is_floating_point(tokens) or tokens.dtype == torch.bool:
        raise ValueError("tokens must be integer ids")
    T, V = logits.shape
    if tokens.shape[0] != T:
        raise ValueError("tokens and logits have different lengths")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError("a token id is outside [0, V)")
    z = logits.detach()
    ex = torch.exp(z - z.max())
    probs = ex / ex.sum(dim=-1, keepdim=True)
    onehot = torch.nn.functional.one_hot(tokens.long(), V).to(probs.dtype)
    return onehot - probs
