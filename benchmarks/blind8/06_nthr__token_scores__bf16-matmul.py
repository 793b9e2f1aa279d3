"""Slip: runs the two matrix products in bfloat16 (an autocast habit for speed) and casts back, so
the scores carry a relative error of about 1e-2, far outside the 1e-4 tolerance, instead of
being computed in the inputs' precision.
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


def token_scores(h_a, err_a, h_b, err_b):
    """For each token k′ of set a: s[k′] = Σ_k ⟨err_a[k′], err_b[k]⟩ · ⟨h_a[k′], h_b[k]⟩ over all tokens k of set b."""
    for name, x in (("h_a", h_a), ("err_a", err_a), ("h_b", h_b), ("err_b", err_b)):
        _require_tensor(x, name, 2)
        _require_float(x, name)
        if x.shape[0] == 0:
            raise ValueError(f"{name} is an empty set")
    if h_a.shape[0] != err_a.shape[0] or h_b.shape[0] != err_b.shape[0]:
        raise ValueError("h and err of one set have different numbers of rows")
    if h_a.shape[1] != h_b.shape[1] or err_a.shape[1] != err_b.shape[1]:
        raise ValueError("D or V differ between the sets")
    dtype = h_a.dtype
    alpha = err_a.to(torch.bfloat16) @ err_b.to(torch.bfloat16).T
    sim = h_a.to(torch.bfloat16) @ h_b.to(torch.bfloat16).T
    return (alpha * sim).sum(dim=1).to(dtype)
