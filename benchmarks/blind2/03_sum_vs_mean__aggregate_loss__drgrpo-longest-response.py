"""
notebook: 03_sum_vs_mean
function: aggregate_loss
slip: in "seq-mean-token-sum-norm" (Dr. GRPO) it divides by B times the longest valid response of the batch (max of the row lengths) instead of B * max_len, the constant generation budget (max_len is only checked, never used).
"""

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
    if values.ndim != 2 or mask.shape != values.shape:
        raise ValueError("values must be 2-D and mask of the same shape")
    if values.shape[0] == 0:
        raise ValueError("no rows")
    if not np.isin(mask, (0, 1)).all():
        raise ValueError("mask must hold 0/1")
    mask = mask.astype(bool)
    n = mask.sum(axis=1)
    if np.any(n == 0):
        raise ValueError("a row has no valid token")
    return values, mask, n


def aggregate_loss(per_token_loss, mask, mode, max_len=None):
    values, mask, n_valid = _check_batch(per_token_loss, mask)
    B, T = values.shape
    zeroed = np.where(mask, values, 0.0)
    total = zeroed.sum()
    if mode == "seq-mean-token-mean":
        return float((zeroed.sum(axis=1) / n_valid).mean())
    elif mode == "token-mean":
        return float(total / n_valid.sum())
    elif mode == "seq-mean-token-sum":
        return float(zeroed.sum(axis=1).mean())
    elif mode == "seq-mean-token-sum-norm":
        if max_len is None or max_len < T:
            raise ValueError("max_len is required and must be >= T")
        longest = int(n_valid.max())  # the generation length actually used
        return float(total / (B * longest))
    raise ValueError(f"unknown mode: {mode}")
