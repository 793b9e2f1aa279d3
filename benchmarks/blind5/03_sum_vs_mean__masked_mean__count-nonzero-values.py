"""notebook: 03_sum_vs_mean
function: masked_mean
slip: the denominator counts the nonzero masked values (np.count_nonzero of the zeroed-out row) instead of the number of valid tokens, so a valid token whose value is exactly 0 is treated as padding."""

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
    zeroed = np.where(mask, values, 0.0)
    return zeroed.sum(axis=1) / np.count_nonzero(zeroed, axis=1)
