"""Slip: computes ½·(logp² − ref_logp²), a difference of squares, instead of ½·(logp − ref_logp)²,
the square of the difference.
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


def k2(logp, ref_logp):
    """Schulman's k2: 0.5 · (log π(x) − log π_ref(x))², elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    return 0.5 * (a**2 - b**2)
