"""notebook: 03_sum_vs_mean
function: masked_mean
library: OpenRLHF/OpenRLHF@3c3be6234e0c openrlhf/models/utils.py (masked_mean, dim=-1)
slip: the library masks by multiplication, (values * mask).sum / mask.sum, so a NaN or inf at a padded position gives NaN for its row instead of being ignored."""

import numpy as np


def _check_batch(values, mask):
    """(values as float64, mask as float64 0/1, valid tokens per row); ValueError when invalid."""
    v = np.asarray(values, dtype=np.float64)
    m = np.asarray(mask)
    if v.ndim != 2:
        raise ValueError(f"values must be 2-D (B, T), got {v.ndim}-D")
    if m.shape != v.shape:
        raise ValueError(f"mask has shape {m.shape}, values {v.shape}: they must match")
    if not np.isin(m, (0, 1)).all():
        raise ValueError("mask entries must be 0/1 or bool")
    if v.shape[0] == 0:
        raise ValueError("the batch has no rows: no mean to return")
    m = m.astype(np.float64)
    counts = m.sum(axis=1)
    if (counts == 0).any():
        raise ValueError(f"row(s) {np.flatnonzero(counts == 0).tolist()} have no valid token")
    return v, m, counts


def masked_mean(values, mask):
    """Row means as OpenRLHF's masked_mean takes them: masked by multiplying, not by selecting."""
    v, m, _ = _check_batch(values, mask)
    with np.errstate(invalid="ignore"):
        return (v * m).sum(axis=1) / m.sum(axis=1)
