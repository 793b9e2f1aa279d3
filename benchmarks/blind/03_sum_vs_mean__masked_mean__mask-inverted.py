"""
notebook: 03_sum_vs_mean
function: masked_mean
slip: the mask is read as a padding mask (True = pad, like an attention "key_padding_mask"), so the mean is taken over the padded positions and the valid tokens are dropped; the empty-row check is inverted the same way.
"""

import numpy as np


def _check_batch(values, mask):
    values = np.asarray(values, dtype=np.float64)
    mask = np.asarray(mask)
    if values.ndim != 2:
        raise ValueError(f"values must be 2-D, got shape {values.shape}")
    if mask.shape != values.shape:
        raise ValueError(f"mask shape {mask.shape} != values shape {values.shape}")
    if values.shape[0] == 0:
        raise ValueError("batch has no rows")
    if not np.isin(mask, (0, 1)).all():
        raise ValueError("mask entries must be 0/1 or bool")
    pad = mask.astype(bool)  # positions to ignore... (read as padding)
    keep = ~pad
    counts = keep.sum(axis=1)
    if (counts == 0).any():
        raise ValueError("a row has no valid token")
    return values, keep, counts


def masked_mean(values, mask):
    """Mean of each row over its valid tokens."""
    values, keep, counts = _check_batch(values, mask)
    return np.where(keep, values, 0.0).sum(axis=1) / counts
