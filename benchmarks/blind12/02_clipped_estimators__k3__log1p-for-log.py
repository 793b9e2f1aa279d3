"""Slip: uses np.log1p(r) (log of 1 + r, reached for as a 'stable' log) in place of log r, so k3 becomes (r - 1) - log(1 + r) instead of (r - 1) - log r."""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    for name, x in (("logp", a), ("ref_logp", b)):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} has a NaN or infinite entry")
        if (x > 0).any():
            raise ValueError(f"{name} has an entry above 0: not a log probability")
    np.broadcast_shapes(a.shape, b.shape)
    return a, b


def k3(logp, ref_logp):
    """Schulman's k3: r - 1 - log r with r = pi_ref(x) / pi(x), elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    r = np.exp(lq - lp)
    return (r - 1.0) - np.log1p(r)
