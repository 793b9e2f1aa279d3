"""
notebook: 02_clipped_estimators
function: k3
slip: uses r = pi / pi_ref instead of pi_ref / pi, i.e. exp(logp - ref_logp) - 1 - (logp - ref_logp), the k3 of the other KL direction.
"""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("log probabilities must be finite")
    if (a > 0).any() or (b > 0).any():
        raise ValueError("a log probability cannot be positive")
    np.broadcast_shapes(a.shape, b.shape)  # raises ValueError when they do not broadcast
    return a, b


def k3(logp, ref_logp):
    """Schulman's k3: r - 1 - log r, elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    log_r = lp - lq  # log ratio policy / reference
    return np.exp(log_r) - 1.0 - log_r
