"""notebook: 06_nthr
function: prediction_errors
slip: stabilises the hand-written softmax by subtracting the maximum of the whole (T, V) tensor instead of each row's maximum, so a row far below the largest logit underflows to 0 / 0 = NaN."""

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
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def prediction_errors(logits, tokens):
    _require_tensor(logits, "logits", 2)
    _require_tensor(tokens, "tokens", 1)
    _require_float(logits, "logits")
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise ValueError("tokens must be integer ids")
    T, V = logits.shape
    if tokens.shape[0] != T:
        raise ValueError(f"{tokens.shape[0]} tokens for {T} rows of logits")
    if ((tokens < 0) | (tokens >= V)).any():
        raise ValueError("a token id is outside [0, V)")
    z = torch.exp(logits - logits.max())
    probs = z / z.sum(dim=-1, keepdim=True)
    one_hot = torch.nn.functional.one_hot(tokens.long(), V).to(probs.dtype)
    return one_hot - probs
