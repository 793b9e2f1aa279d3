"""Slip: counts each row's valid tokens in uint8 (mask.sum(axis=1, dtype=np.uint8)), so a row with 256 or more valid tokens wraps around and is divided by the wrong count."""

import numpy as np


def _check_batch(values, mask):
    """(values as float64, mask as bool, valid tokens per row); ValueError when the batch is invalid."""
    values = np.asarray(values, dtype=np.float64)
    mask = np.asarray(mask)
    if values.ndim != 2:
        raise ValueError("values must be 2-D (B, T)")
    if mask.shape != values.shape:
        raise ValueError("mask must have the shape of values")
    if not np.isin(mask, (0, 1)).all():
        raise ValueError("mask entries must be 0/1 or bool")
    if values.shape[0] == 0:
        raise ValueError("a batch with no rows")
    mask = mask.astype(bool)
    counts = mask.sum(axis=1)
    if (counts == 0).any():
        raise ValueError("a row has no valid token")
    return values, mask, counts


def masked_mean(values, mask):
    """Mean of each row over its valid tokens."""
    values, mask, _ = _check_batch(values, mask)
    counts = mask.sum(axis=1, dtype=np.uint8)
    return np.where(mask, values, 0.0).sum(axis=1) / counts
