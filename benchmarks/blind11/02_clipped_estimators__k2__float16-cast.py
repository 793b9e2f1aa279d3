"""Slip: computes the squared log ratio in float16 (a half-precision habit from mixed-precision
training) and casts back, losing about three significant digits instead of returning float64
values.
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


def k2(logp, ref_logp):
    """Schulman's k2: 0.5 * (log pi(x) - log pi_ref(x))**2, elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    d = (lp - lq).astype(np.float16)
    return (np.float16(0.5) * d * d).astype(np.float64)
