"""Slip: the pair of a token with itself is removed by zeroing the diagonal of the (Na, Nb) score
matrix (a 'leave own pair out' reading), so for set a equal to set b each token loses its own term,
and for other sets the pairs (k, k) are dropped arbitrarily, instead of summing over all Nb tokens."""

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


def token_scores(h_a, err_a, h_b, err_b):
    """For each token k′ of set a: s[k′] = Σ_k ⟨err_a[k′], err_b[k]⟩ · ⟨h_a[k′], h_b[k]⟩."""
    for name, x in (("h_a", h_a), ("err_a", err_a), ("h_b", h_b), ("err_b", err_b)):
        _require_tensor(x, name, 2)
        _require_float(x, name)
        if x.shape[0] == 0:
            raise ValueError(f"{name} is an empty set")
    if h_a.shape[0] != err_a.shape[0] or h_b.shape[0] != err_b.shape[0]:
        raise ValueError("h and err of one set have different row counts")
    if h_a.shape[1] != h_b.shape[1] or err_a.shape[1] != err_b.shape[1]:
        raise ValueError("D or V differ between the sets")
    alpha = err_a @ err_b.T
    sim = h_a @ h_b.T
    scores = alpha * sim
    scores.fill_diagonal_(0.0)
    return scores.sum(dim=1)
