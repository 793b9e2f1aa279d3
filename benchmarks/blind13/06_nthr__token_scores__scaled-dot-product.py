"""Slip: divides the hidden-state similarity by sqrt(D) (an attention-style scaled dot product) instead of using the plain inner product <h_a[k'], h_b[k]>."""

import math

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


def token_scores(h_a, err_a, h_b, err_b):
    """For each token k' of set a: s[k'] = sum_k <err_a[k'], err_b[k]> * <h_a[k'], h_b[k]>."""
    for x, name in ((h_a, "h_a"), (err_a, "err_a"), (h_b, "h_b"), (err_b, "err_b")):
        _require_tensor(x, name, 2)
        _require_float(x, name)
    if h_a.shape[0] == 0 or h_b.shape[0] == 0:
        raise ValueError("an empty set")
    if h_a.shape[0] != err_a.shape[0] or h_b.shape[0] != err_b.shape[0]:
        raise ValueError("h and err of one set have different row counts")
    if h_a.shape[1] != h_b.shape[1] or err_a.shape[1] != err_b.shape[1]:
        raise ValueError("D or V differ between the sets")
    alpha = err_a @ err_b.T
    sim = (h_a @ h_b.T) / math.sqrt(h_a.shape[1])
    return (alpha * sim).sum(dim=1)
