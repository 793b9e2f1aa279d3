"""notebook: 02_clipped_estimators
function: k1
slip: the inputs are read with np.atleast_1d, so scalar (0-d) log probabilities give an array of shape (1,) instead of the broadcast shape ()."""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    lp = np.atleast_1d(np.asarray(logp, dtype=np.float64))
    lq = np.atleast_1d(np.asarray(ref_logp, dtype=np.float64))
    for name, a in (("logp", lp), ("ref_logp", lq)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} has an entry that is not finite")
        if (a > 0).any():
            raise ValueError(f"{name} has an entry above 0: not a log probability")
    np.broadcast_shapes(lp.shape, lq.shape)  # raises ValueError when they do not broadcast
    return lp, lq


def k1(logp, ref_logp):
    """Schulman's k1: the sampled log ratio log π(x) − log π_ref(x), elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    return lp - lq
