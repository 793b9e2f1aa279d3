"""notebook: 03_sum_vs_mean
function: aggregate_loss
library: huggingface/trl@f2cd57710ae3 trl/trainer/grpo_trainer.py (GRPOTrainer._compute_loss, loss_type grpo / bnpo / dr_grpo)
slip: the library masks the per-token loss by multiplication (loss * mask), so an inf or NaN at a padded position makes the loss NaN, where the text says padded positions may hold anything; on finite padding every mode agrees with the text."""

import numpy as np

AGGREGATION_MODES = (
    "seq-mean-token-mean",
    "token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-sum-norm",
)


def _check_batch(values, mask):
    """(values as float64, mask as float64 0/1, valid tokens per row); ValueError when invalid."""
    v = np.asarray(values, dtype=np.float64)
    m = np.asarray(mask)
    if v.ndim != 2:
        raise ValueError(f"per_token_loss must be 2-D (B, T), got {v.ndim}-D")
    if m.shape != v.shape:
        raise ValueError(f"mask has shape {m.shape}, per_token_loss {v.shape}: they must match")
    if not np.isin(m, (0, 1)).all():
        raise ValueError("mask entries must be 0/1 or bool")
    if v.shape[0] == 0:
        raise ValueError("the batch has no rows")
    m = m.astype(np.float64)
    counts = m.sum(axis=1)
    if (counts == 0).any():
        raise ValueError(f"row(s) {np.flatnonzero(counts == 0).tolist()} have no valid token")
    return v, m, counts


def aggregate_loss(per_token_loss, mask, mode, max_len=None):
    """The loss reductions of TRL's GRPO trainer, named by the course's modes.

    seq-mean-token-mean = loss_type "grpo", token-mean = "bnpo" (the per-batch token mean),
    seq-mean-token-sum-norm = "dr_grpo" (max_len = max_completion_length). TRL has no
    seq-mean-token-sum loss type: that mode is the text's formula with the same masking.
    """
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {AGGREGATION_MODES}")
    v, m, _ = _check_batch(per_token_loss, mask)
    batch, width = v.shape
    with np.errstate(invalid="ignore", over="ignore"):
        masked = v * m  # the library's masking: a product, not a selection
        if mode == "seq-mean-token-mean":
            return float((masked.sum(axis=-1) / np.maximum(m.sum(axis=-1), 1.0)).mean())
        if mode == "token-mean":
            return float(masked.sum() / max(m.sum(), 1.0))
        if mode == "seq-mean-token-sum":
            return float(masked.sum(axis=-1).mean())
        if max_len is None:
            raise ValueError("seq-mean-token-sum-norm needs max_len")
        if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)):
            raise ValueError(f"max_len must be an int, got {max_len!r}")
        if max_len < width:
            raise ValueError(f"max_len {max_len} is smaller than the padded length T = {width}")
        return float(masked.sum() / (batch * max_len))
