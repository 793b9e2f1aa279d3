"""Slip: forms r as exp(ref_logp) / exp(logp), a ratio of probabilities, instead of exp(ref_logp −
logp); for very negative log probabilities (below about −745) both exponentials underflow to 0
and k3 is NaN.
"""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    for name, x in (("logp", a), ("ref_logp", b)):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} has NaN or infinite entries")
        if (x > 0).any():
            raise ValueError(f"{name} has entries above 0: not log probabilities")
    np.broadcast_shapes(a.shape, b.shape)  # raises ValueError when the shapes do not broadcast
    return a, b


def k3(logp, ref_logp):
    """Schulman's k3: r − 1 − log r with r = π_ref(x) / π(x), elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.exp(b) / np.exp(a)
        return r - 1 - np.log(r)
