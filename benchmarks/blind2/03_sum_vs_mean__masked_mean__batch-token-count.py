"""
notebook: 03_sum_vs_mean
function: masked_mean
slip: divides each row's masked sum by the total number of valid tokens in the whole batch (mask.sum() without axis=1) instead of that row's own count.
"""

import numpy as np


def _check_batch(values, mask):
    values = np.asarray(values, dtype=np.float64)
    mask = np.asarray(mask)
    if values.ndim != 2:
        raise ValueError("values must be 2-D (B, T)")
    if mask.shape != values.shape:
        raise ValueError(f"mask shape {mask.shape} != values shape {values.shape}")
    if values.shape[0] == 0:
        raise ValueError("batch has no rows")
    if not np.isin(mask, (0, 1)).all():
        raise ValueError("mask entries must be 0/1 or bool")
    mask = mask.astype(bool)
    counts = mask.sum(axis=1)
    if (counts == 0).any():
        raise ValueError("a row has no valid token")
    return values, mask, counts


def masked_mean(values, mask):
    values, mask, _ = _check_batch(values, mask)
    row_sums = np.where(mask, values, 0.0).sum(axis=1)
    n_valid = mask.sum()
    return row_sums / n_valid
