"""Slip: computes k2 from the expanded square 0.5 * (logp**2 - 2*logp*ref_logp + ref_logp**2) instead of 0.5 * (logp - ref_logp)**2; catastrophic cancellation makes it wrong (even negative) when both log probabilities are large and close."""

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


def k2(logp, ref_logp):
    """Schulman's k2: 0.5 * (log pi(x) - log pi_ref(x))**2, elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    return 0.5 * (a * a - 2.0 * a * b + b * b)
