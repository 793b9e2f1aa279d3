"""notebook: 06_nthr
function: token_scores
slip: when set a and set b are the same tokens, the diagonal pairs (a token against itself) are left out, as in the paper's "other correct responses", although the formula sums over every token of b."""

import torch


def _require_tensor(x, name, ndim):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")


def _require_float(x, name):
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating tensor")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or inf")


def token_scores(h_a, err_a, h_b, err_b):
    for name, x in (("h_a", h_a), ("err_a", err_a), ("h_b", h_b), ("err_b", err_b)):
        _require_tensor(x, name, 2)
        _require_float(x, name)
    if h_a.shape[0] == 0 or h_b.shape[0] == 0:
        raise ValueError("an empty set of tokens")
    if h_a.shape[0] != err_a.shape[0] or h_b.shape[0] != err_b.shape[0]:
        raise ValueError("h and err of one set have different numbers of rows")
    if h_a.shape[1] != h_b.shape[1] or err_a.shape[1] != err_b.shape[1]:
        raise ValueError("D or V differ between the sets")
    pair = (err_a @ err_b.T) * (h_a @ h_b.T)
    if h_a.shape == h_b.shape and torch.equal(h_a, h_b) and torch.equal(err_a, err_b):
        pair = pair - torch.diag(torch.diagonal(pair))
    return pair.sum(dim=1)
