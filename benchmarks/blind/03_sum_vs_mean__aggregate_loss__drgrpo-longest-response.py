"""
notebook: 03_sum_vs_mean
function: aggregate_loss
slip: in "seq-mean-token-sum-norm" the masked sum is divided by B times the longest valid response in the batch instead of B * max_len (max_len is validated but then not used as the divisor).
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
        raise ValueError("values must be 2-D (B, T)")
    if m.shape != v.shape:
        raise ValueError("mask must have the shape of values")
    if v.shape[0] == 0:
        raise ValueError("empty batch")
    if not np.isin(m, (0, 1)).all():
        raise ValueError("mask must be 0/1 or bool")
    m = m.astype(bool)
    n = m.sum(axis=1)
    if (n == 0).any():
        raise ValueError("a row has no valid token")
    return v, m, n


def aggregate_loss(per_token_loss, mask, mode, max_len=None):
    """Reduce a masked (B, T) per-token loss to one float."""
    v, m, n = _check_batch(per_token_loss, mask)
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")
    B, T = v.shape
    z = np.where(m, v, 0.0)
    row_sums = z.sum(axis=1)
    if mode == "seq-mean-token-mean":
        return float(np.mean(row_sums / n))
    if mode == "token-mean":
        return float(row_sums.sum() / n.sum())
    if mode == "seq-mean-token-sum":
        return float(row_sums.mean())
    if max_len is None or max_len < T:
        raise ValueError("seq-mean-token-sum-norm needs max_len >= T")
    longest = int(n.max())
    return float(row_sums.sum() / (B * longest))
