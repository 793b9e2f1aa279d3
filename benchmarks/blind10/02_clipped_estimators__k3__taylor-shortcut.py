"""Slip: evaluates k3 by its Taylor expansion d²/2 + d³/6 around d = 0 (to avoid the cancellation in exp(d) − 1 − d) instead of the exact exp(d) − 1 − d; right only for tiny log ratios."""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    for name, x in (("logp", a), ("ref_logp", b)):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} has an entry that is not finite")
        if (x > 0).any():
            raise ValueError(f"{name} has an entry above 0: not a log probability")
    np.broadcast_shapes(a.shape, b.shape)  # raises ValueError when the shapes do not broadcast
    return a, b


def k3(logp, ref_logp):
    """Schulman's k3: r − 1 − log r with r = π_ref(x) / π(x), elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    d = lq - lp
    return d**2 / 2.0 + d**3 / 6.0
