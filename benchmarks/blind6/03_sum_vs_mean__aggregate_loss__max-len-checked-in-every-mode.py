"""notebook: 03_sum_vs_mean
function: aggregate_loss
slip: checks a given max_len against T in every mode, so a max_len smaller than T passed to a mode that ignores it raises ValueError instead of being ignored."""

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


def aggregate_loss(per_token_loss, mask, mode, max_len=None):
    values, mask, counts = _check_batch(per_token_loss, mask)
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")
    B, T = values.shape
    if mode == "seq-mean-token-sum-norm" and max_len is None:
        raise ValueError("seq-mean-token-sum-norm needs max_len")
    if max_len is not None and max_len < T:
        raise ValueError(f"max_len {max_len} is smaller than T = {T}")
    zeroed = np.where(mask, values, 0.0)
    row_sums = zeroed.sum(axis=1)
    if mode == "seq-mean-token-mean":
        return float((row_sums / counts).mean())
    if mode == "token-mean":
        return float(row_sums.sum() / counts.sum())
    if mode == "seq-mean-token-sum":
        return float(row_sums.mean())
    return float(row_sums.sum() / (B * max_len))
