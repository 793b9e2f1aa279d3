"""Slip: the denominator counts the nonzero entries of the masked row (np.count_nonzero after
zeroing the padding) instead of the row's valid tokens, so a valid token whose value is exactly 0
is dropped from the count (and an all-zero row gives 0/0 = NaN)."""

import numpy as np


def _check_batch(values, mask):
    """(values as float64, mask as bool, valid tokens per row); ValueError when the batch is invalid."""
    values = np.asarray(values, dtype=np.float64)
    mask = np.asarray(mask)
    if values.ndim != 2:
        raise ValueError(f"values must be 2-D, got shape {values.shape}")
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
    masked = np.where(mask, values, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return masked.sum(axis=1) / np.count_nonzero(masked, axis=1)
