"""Slip: treats each row's valid-token count L_b as a length and averages values[b, :L_b] (assumes right padding) instead of averaging the positions the mask marks; wrong for left-padded or holed masks."""

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
    values, mask, counts = _check_batch(values, mask)
    return np.array([values[b, : int(counts[b])].mean() for b in range(values.shape[0])])
