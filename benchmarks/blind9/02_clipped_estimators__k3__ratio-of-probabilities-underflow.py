"""Slip: forms r as a ratio of probabilities, exp(ref_logp) / exp(logp), instead of exp(ref_logp -
logp); for log probabilities below about -745 both exponentials underflow to 0 and k3 becomes
NaN (or inf)."""

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


def k3(logp, ref_logp):
    """Schulman's k3: r - 1 - log r with r = pi_ref(x) / pi(x), elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.exp(b) / np.exp(a)
        return r - 1.0 - np.log(r)
