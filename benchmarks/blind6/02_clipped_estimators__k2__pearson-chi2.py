"""notebook: 02_clipped_estimators
function: k2
slip: computes ½ (r − 1)² with r = π_ref/π (the Pearson χ² form, a neighbour of k2) instead of ½ (log r)²."""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    lp = np.asarray(logp, dtype=np.float64)
    lq = np.asarray(ref_logp, dtype=np.float64)
    for name, a in (("logp", lp), ("ref_logp", lq)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} holds NaN or inf")
        if (a > 0).any():
            raise ValueError(f"{name} holds an entry above 0: not a log probability")
    try:
        np.broadcast_shapes(lp.shape, lq.shape)
    except ValueError as e:
        raise ValueError(f"shapes {lp.shape} and {lq.shape} do not broadcast") from e
    return lp, lq


def k2(logp, ref_logp):
    lp, lq = _log_prob_arrays(logp, ref_logp)
    r = np.exp(lq - lp)
    return 0.5 * (r - 1.0) ** 2
