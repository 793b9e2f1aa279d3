"""Slip: squares the ratio minus one, 0.5 * (exp(logp - ref_logp) - 1)^2 (a chi-square style term),
instead of half the squared log ratio 0.5 * (logp - ref_logp)^2."""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    for name, x in (("logp", a), ("ref_logp", b)):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} has a non-finite entry")
        if (x > 0).any():
            raise ValueError(f"{name} has an entry above 0: not a log probability")
    np.broadcast_shapes(a.shape, b.shape)
    return a, b


def k2(logp, ref_logp):
    """Schulman's k2: 0.5 * (log pi(x) - log pi_ref(x))^2, elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    return 0.5 * (np.exp(a - b) - 1.0) ** 2
