"""Slip: computes the two (Na, Nb) similarity matrices and their product in float16 (to fit Na·Nb in memory) instead of in the inputs' precision, so scores lose about three significant digits, beyond the 1e-4 tolerance."""

import torch


def _require_tensor(x, name, ndim):
    """Raise ValueError unless x is a torch tensor with `ndim` dimensions."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got {x.dim()}-D")


def _require_float(x, name):
    """Raise ValueError unless x is a floating tensor without NaN or ±inf."""
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def token_scores(h_a, err_a, h_b, err_b):
    """For each token k′ of set a: s[k′] = Σ_k ⟨err_a[k′], err_b[k]⟩ · ⟨h_a[k′], h_b[k]⟩."""
    for name, x in (("h_a", h_a), ("err_a", err_a), ("h_b", h_b), ("err_b", err_b)):
        _require_tensor(x, name, 2)
        _require_float(x, name)
        if x.shape[0] == 0:
            raise ValueError(f"{name} is an empty set")
    if h_a.shape[0] != err_a.shape[0] or h_b.shape[0] != err_b.shape[0]:
        raise ValueError("h and err of one set must have the same number of rows")
    if h_a.shape[1] != h_b.shape[1] or err_a.shape[1] != err_b.shape[1]:
        raise ValueError("D or V differ between the sets")
    alpha = err_a.half() @ err_b.half().T
    sim = h_a.half() @ h_b.half().T
    return (alpha * sim).sum(dim=1).to(h_a.dtype)
