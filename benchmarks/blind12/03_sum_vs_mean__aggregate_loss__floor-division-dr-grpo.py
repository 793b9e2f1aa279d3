"""Slip: in "seq-mean-token-sum-norm" divides with floor division (//) by B * max_len, so Dr. GRPO's loss is rounded down to a whole number instead of being the true quotient."""

import numpy as np

AGGREGATION_MODES = (
    "seq-mean-token-mean",
    "token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-sum-norm",
)


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


def aggregate_loss(per_token_loss, mask, mode, max_len=None):
    """Reduce a masked (B, T) per-token loss to one float, as the named training recipe does."""
    values, mask, counts = _check_batch(per_token_loss, mask)
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")
    b, t = values.shape
    row_sums = np.where(mask, values, 0.0).sum(axis=1)
    if mode == "seq-mean-token-mean":
        return float(np.mean(row_sums / counts))
    if mode == "token-mean":
        return float(row_sums.sum() / counts.sum())
    if mode == "seq-mean-token-sum":
        return float(row_sums.mean())
    if max_len is None or max_len < t:
        raise ValueError("seq-mean-token-sum-norm needs max_len >= T")
    return float(row_sums.sum() // (b * max_len))
