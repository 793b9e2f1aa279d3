"""
notebook: 02_clipped_estimators
function: k1
slip: the sign check uses >= 0 instead of > 0, so a log probability of exactly 0 (probability 1, which the text allows) raises ValueError.
"""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    lp = np.asarray(logp, dtype=np.float64)
    lq = np.asarray(ref_logp, dtype=np.float64)
    for name, a in (("logp", lp), ("ref_logp", lq)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} has NaN or infinite entries")
        if (a >= 0).any():
            raise ValueError(f"{name} must hold log probabilities (negative numbers)")
    try:
        np.broadcast_shapes(lp.shape, lq.shape)
    except ValueError as e:
        raise ValueError(f"shapes {lp.shape} and {lq.shape} do not broadcast") from e
    return lp, lq


def k1(logp, ref_logp):
    """Schulman's k1: log pi(x) - log pi_ref(x), elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    return lp - lq
