"""
notebook: 06_nthr
function: token_scores
slip: combines the two (Na, Nb) similarity matrices with a matrix product, (err_a err_b^T) @ (h_b h_a^T), and sums its rows, instead of multiplying them elementwise and summing over b.
"""

import torch


def _check(x, name):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a tensor")
    if x.dim() != 2:
        raise ValueError(f"{name} must be 2-D")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be floating point")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN/inf")
    if x.shape[0] == 0:
        raise ValueError(f"{name} is an empty set")


def token_scores(h_a, err_a, h_b, err_b):
    for x, n in ((h_a, "h_a"), (err_a, "err_a"), (h_b, "h_b"), (err_b, "err_b")):
        _check(x, n)
    if h_a.shape[0] != err_a.shape[0] or h_b.shape[0] != err_b.shape[0]:
        raise ValueError("h and err of one set must have the same number of rows")
    if h_a.shape[1] != h_b.shape[1]:
        raise ValueError("hidden sizes D differ between the sets")
    if err_a.shape[1] != err_b.shape[1]:
        raise ValueError("vocabulary sizes V differ between the sets")
    alpha = err_a @ err_b.T  # (Na, Nb)
    hid = h_b @ h_a.T  # (Nb, Na)
    return (alpha @ hid).sum(dim=1)  # (Na,)
