"""notebook: 02_clipped_estimators
function: k2
slip: computes 0.5 · (logp² − ref_logp²), the difference of the squares, instead of 0.5 · (logp − ref_logp)², the square of the difference."""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    lp = np.asarray(logp, dtype=np.float64)
    lq = np.asarray(ref_logp, dtype=np.float64)
    for name, a in (("logp", lp), ("ref_logp", lq)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} has an entry that is not finite")
        if (a > 0).any():
            raise ValueError(f"{name} has an entry above 0: not a log probability")
    np.broadcast_shapes(lp.shape, lq.shape)  # raises ValueError when they do not broadcast
    return lp, lq


def k2(logp, ref_logp):
    """Schulman's k2: 0.5 · (log π(x) − log π_ref(x))², elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    return 0.5 * (lp**2 - lq**2)
