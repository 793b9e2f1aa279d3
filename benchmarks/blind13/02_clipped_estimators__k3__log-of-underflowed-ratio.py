"""Slip: forms r = exp(ref_logp - logp) first and then takes np.log(r), so when the reference is far below the policy (r underflows to 0) k3 becomes inf instead of r - 1 + (logp - ref_logp), a finite number."""

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


def k3(logp, ref_logp):
    """Schulman's k3: r - 1 - log r with r = pi_ref(x) / pi(x), elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    r = np.exp(b - a)
    with np.errstate(divide="ignore"):
        return r - 1.0 - np.log(r)
