"""notebook: 03_sum_vs_mean
function: aggregate_loss
slip: in "seq-mean-token-sum-norm" max_len is checked against the longest row's valid-token count instead of the padded length T, so a max_len below T is accepted."""

import numpy as np

AGGREGATION_MODES = (
    "seq-mean-token-mean",
    "token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-sum-norm",
)


def _check_batch(values, mask):
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


def aggregate_loss(per_token_loss, mask, mode, max_len=None):
    values, mask, counts = _check_batch(per_token_loss, mask)
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}")
    B = values.shape[0]
    row_sums = np.where(mask, values, 0.0).sum(axis=1)
    if mode == "seq-mean-token-mean":
        return float((row_sums / counts).mean())
    if mode == "token-mean":
        return float(row_sums.sum() / counts.sum())
    if mode == "seq-mean-token-sum":
        return float(row_sums.mean())
    if max_len is None or max_len < counts.max():
        raise ValueError("seq-mean-token-sum-norm needs max_len >= the longest response")
    return float(row_sums.sum() / (B * max_len))
