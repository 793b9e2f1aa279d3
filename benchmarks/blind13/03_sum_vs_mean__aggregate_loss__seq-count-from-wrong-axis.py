"""Slip: in "seq-mean-token-sum" the number of sequences B is read from mask.shape[1] (the padded length T) instead of mask.shape[0], so the sum is divided by T."""

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


def aggregate_loss(per_token_loss, mask, mode, max_len=None):
    """Reduce a masked (B, T) per-token loss to one float, as the named training recipe does."""
    values, mask, counts = _check_batch(per_token_loss, mask)
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")
    B, T = values.shape
    row_sums = np.where(mask, values, 0.0).sum(axis=1)
    if mode == "seq-mean-token-mean":
        return float(np.mean(row_sums / counts))
    if mode == "token-mean":
        return float(row_sums.sum() / counts.sum())
    if mode == "seq-mean-token-sum":
        n_seq = mask.shape[1]
        return float(row_sums.sum() / n_seq)
    if max_len is None or max_len < T:
        raise ValueError("seq-mean-token-sum-norm needs max_len >= T")
    return float(row_sums.sum() / (B * max_len))
