"""
notebook: 06_nthr
function: token_scores
slip: the prediction errors are L2-normalised before their inner product (a cosine similarity for alpha), so alpha no longer carries the errors' sizes and confidently predicted tokens score as much as uncertain ones.
"""

import torch


def _check(x, name):
    if not isinstance(x, torch.Tensor) or x.dim() != 2:
        raise ValueError(f"{name} must be a 2-D tensor")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be floating")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN/inf")


def token_scores(h_a, err_a, h_b, err_b):
    """s[k'] = sum_k <err_a[k'], err_b[k]> * <h_a[k'], h_b[k]>."""
    for name, x in (("h_a", h_a), ("err_a", err_a), ("h_b", h_b), ("err_b", err_b)):
        _check(x, name)
    if h_a.shape[0] == 0 or h_b.shape[0] == 0:
        raise ValueError("empty token set")
    if h_a.shape[0] != err_a.shape[0] or h_b.shape[0] != err_b.shape[0]:
        raise ValueError("h and err of one set must have the same number of rows")
    if h_a.shape[1] != h_b.shape[1]:
        raise ValueError("hidden sizes D differ between the sets")
    if err_a.shape[1] != err_b.shape[1]:
        raise ValueError("vocabulary sizes V differ between the sets")
    ea = torch.nn.functional.normalize(err_a, dim=-1)
    eb = torch.nn.functional.normalize(err_b, dim=-1)
    alpha = ea @ eb.T  # (Na, Nb)
    hid = h_a @ h_b.T  # (Na, Nb)
    return (alpha * hid).sum(dim=1)
