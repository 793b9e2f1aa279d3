"""notebook: 06_nthr
function: token_scores
slip: when set a and set b are the same tokens, leaves each token's pairing with itself out of the sum (the paper's "other responses" wording) instead of summing over all tokens of b."""

import torch


def _check_set(h, err, tag):
    for name, x in ((f"h_{tag}", h), (f"err_{tag}", err)):
        if not isinstance(x, torch.Tensor) or x.dim() != 2:
            raise ValueError(f"{name} must be a 2-D torch tensor")
        if not x.is_floating_point():
            raise ValueError(f"{name} must be floating")
        if not torch.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or inf")
    if h.shape[0] == 0:
        raise ValueError(f"set {tag} is empty")
    if h.shape[0] != err.shape[0]:
        raise ValueError(f"h_{tag} and err_{tag} have different numbers of rows")


def token_scores(h_a, err_a, h_b, err_b):
    _check_set(h_a, err_a, "a")
    _check_set(h_b, err_b, "b")
    if h_a.shape[1] != h_b.shape[1] or err_a.shape[1] != err_b.shape[1]:
        raise ValueError("D or V differ between the sets")
    prod = (err_a @ err_b.T) * (h_a @ h_b.T)
    if h_a.shape == h_b.shape and torch.equal(h_a, h_b) and torch.equal(err_a, err_b):
        prod = prod - torch.diag(torch.diagonal(prod))
    return prod.sum(dim=1)
