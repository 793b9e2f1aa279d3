"""notebook: 03_sum_vs_mean
function: masked_mean
slip: assumes right padding and averages the first L_b positions of each row (L_b = its valid count) instead of the positions the mask marks, so left-padded rows or masks with holes average the wrong tokens."""

import numpy as np


def _check_batch(values, mask):
    """(values as float64, mask as bool, valid tokens per row); ValueError when the batch is invalid."""
    values = np.asarray(values, dtype=np.float64)
    mask = np.asarray(mask)
    if values.ndim != 2:
        raise ValueError(f"values must be 2-D, got shape {values.shape}")
    if mask.shape != values.shape:
        raise ValueError(f"mask shape {mask.shape} differs from values shape {values.shape}")
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
    values, mask, counts = _check_batch(values, mask)
    return np.array(
        [values[b, : counts[b]].mean() for b in range(values.shape[0])], dtype=np.float64
    )
