"""Slip: computes 0.5 * (r - 1)^2 with r = exp(ref_logp - logp), the ratio itself instead of its log, where the text asks for 0.5 * (logp - ref_logp)^2."""

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


def k2(logp, ref_logp):
    """Schulman's k2: 0.5 * (log pi(x) - log pi_ref(x))^2, elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    r = np.exp(lq - lp)
    return 0.5 * (r - 1.0) ** 2
