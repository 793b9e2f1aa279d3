"""Slip: clips with a smooth softplus, log(1 + exp(d)), in place of the hard max(0, d) the text
asks for, so every value is shifted (above 0 even for negative log ratios).
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


def clipped_k1(logp, ref_logp):
    """The clipped sampled log ratio max(0, log π(x) − log π_ref(x)), elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    return np.logaddexp(0.0, a - b)
