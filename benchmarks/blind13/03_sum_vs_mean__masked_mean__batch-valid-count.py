"""Slip: divides each row's masked sum by the number of valid tokens in the whole batch instead of the number of valid tokens in that row."""

import numpy as np


def _check_batch(values, mask):
    """(values as float64, mask as bool, valid tokens per row); ValueError when the batch is invalid."""
    values = np.asarray(values, dtype=np.float64)
    mask = np.asarray(mask)
    if values.ndim != 2:
        raise ValueError("values must be 2-D (B, T)")
    if mask.shape != values.shape:
        raise ValueError(f"mask shape {mask.shape} differs from values shape {values.shape}")
    if values.shape[0] == 0:
        raise ValueError("a batch with no rows")
    if not np.isin(mask, (0, 1)).all():
        raise ValueError("mask entries must be 0/1 or bool")
    mask = mask.astype(bool)
    counts = mask.sum(axis=1)
    if (counts == 0).any():
        raise ValueError("a row has no valid token")
    return values, mask, counts


def masked_mean(values, mask):
    """Mean of each row over its valid tokens."""
    values, mask, counts = _check_batch(values, mask)
    sums = np.where(mask, values, 0.0).sum(axis=1)
    return sums / counts.sum()
