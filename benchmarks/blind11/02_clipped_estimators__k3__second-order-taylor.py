"""Slip: replaces exp(d) - 1 - d by its third-order Taylor expansion d**2/2 + d**3/6 "to avoid
overflowing exp", which is right only when ref_logp - logp is near 0.
"""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    lp = np.asarray(logp, dtype=np.float64)
    lq = np.asarray(ref_logp, dtype=np.float64)
    for name, a in (("logp", lp), ("ref_logp", lq)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} has a NaN or infinite entry")
        if (a > 0).any():
            raise ValueError(f"{name} has an entry above 0: not a log probability")
    np.broadcast_shapes(lp.shape, lq.shape)
    return lp, lq


def k3(logp, ref_logp):
    """Schulman's k3: r - 1 - log r with r = pi_ref(x) / pi(x), elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    d = lq - lp
    return d**2 / 2 + d**3 / 6
