"""notebook: 02_clipped_estimators
function: clipped_k1
slip: ports a library's clamp and clips the log ratio to [0, 10] instead of only from below at 0, so log ratios above 10 are capped."""

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


def clipped_k1(logp, ref_logp):
    lp, lq = _log_prob_arrays(logp, ref_logp)
    return np.clip(lp - lq, 0.0, 10.0)
