"""Slip: subtracts in place into the float64 array made from logp (`a -= b`): when logp is already a float64 array that is the caller's own array, which gets overwritten with the log ratios, and when logp's shape is smaller than the broadcast shape numpy refuses the in-place operation."""

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


def k1(logp, ref_logp):
    """Schulman's k1: the sampled log ratio log π(x) − log π_ref(x), elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    a -= b
    return a
