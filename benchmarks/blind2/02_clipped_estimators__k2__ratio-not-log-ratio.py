"""
notebook: 02_clipped_estimators
function: k2
slip: squares the probability-ratio deviation, 0.5 * (r - 1)^2 with r = exp(ref_logp - logp), instead of half the squared log ratio 0.5 * (logp - ref_logp)^2.
"""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    lp = np.asarray(logp, dtype=np.float64)
    lq = np.asarray(ref_logp, dtype=np.float64)
    if not (np.isfinite(lp).all() and np.isfinite(lq).all()):
        raise ValueError("log probabilities must be finite")
    if (lp > 0).any() or (lq > 0).any():
        raise ValueError("a log probability cannot be above 0")
    np.broadcast_shapes(lp.shape, lq.shape)  # ValueError if they don't broadcast
    return lp, lq


def k2(logp, ref_logp):
    lp, lq = _log_prob_arrays(logp, ref_logp)
    r = np.exp(lq - lp)  # pi_ref / pi
    return 0.5 * (r - 1.0) ** 2
