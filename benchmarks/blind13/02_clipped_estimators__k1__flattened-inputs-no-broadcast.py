"""Slip: both inputs are flattened with .ravel() before subtracting, so inputs of different shapes that broadcast (e.g. (2, 1) against (3,)) raise instead of giving the broadcast (2, 3) result, and a 2-D input comes back 1-D."""

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
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError as e:
        raise ValueError(f"shapes {a.shape} and {b.shape} do not broadcast") from e
    return a, b


def k1(logp, ref_logp):
    """Schulman's k1: the sampled log ratio log pi(x) - log pi_ref(x), elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    a, b = a.ravel(), b.ravel()
    if a.shape != b.shape:
        raise ValueError(f"shapes {a.shape} and {b.shape} differ")
    return a - b
