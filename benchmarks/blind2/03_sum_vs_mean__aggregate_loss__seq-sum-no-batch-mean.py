"""
notebook: 03_sum_vs_mean
function: aggregate_loss
slip: in "seq-mean-token-sum" it sums the row sums over the batch instead of averaging them over the B rows (no division by B); the other modes are right.
"""

import numpy as np

AGGREGATION_MODES = (
    "seq-mean-token-mean",
    "token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-sum-norm",
)


def _check_batch(values, mask):
    v = np.asarray(values, dtype=np.float64)
    m = np.asarray(mask)
    if v.ndim != 2:
        raise ValueError("per_token_loss must be 2-D")
    if m.shape != v.shape:
        raise ValueError("mask must have the shape of the values")
    if v.shape[0] == 0:
        raise ValueError("empty batch")
    if not np.isin(m, (0, 1)).all():
        raise ValueError("mask must be 0/1 or bool")
    m = m.astype(bool)
    lengths = m.sum(axis=1)
    if (lengths == 0).any():
        raise ValueError("row without valid tokens")
    return v, m, lengths


def aggregate_loss(per_token_loss, mask, mode, max_len=None):
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")
    L, M, lengths = _check_batch(per_token_loss, mask)
    B, T = L.shape
    L = np.where(M, L, 0.0)
    row_sums = L.sum(axis=1)
    if mode == "seq-mean-token-mean":
        return float(np.mean(row_sums / lengths))
    if mode == "token-mean":
        return float(row_sums.sum() / lengths.sum())
    if mode == "seq-mean-token-sum":
        return float(row_sums.sum())
    if max_len is None or max_len < T:
        raise ValueError("seq-mean-token-sum-norm needs max_len >= T")
    return float(row_sums.sum() / (B * max_len))
