"""Slip: k3 is evaluated in half precision (the log ratio cast to float16, as under mixed-precision
training) and cast back to float64, so values are off by about 1e-4 relative and exp overflows to
inf once ref_logp − logp exceeds about 11, instead of being computed in float64."""

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
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError as e:
        raise ValueError(f"shapes {a.shape} and {b.shape} do not broadcast") from e
    return a, b


def k3(logp, ref_logp):
    """Schulman's k3: r − 1 − log r with r = π_ref(x) / π(x), elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    d = (b - a).astype(np.float16)
    with np.errstate(over="ignore"):
        out = np.exp(d) - np.float16(1) - d
    return np.asarray(out, dtype=np.float64)
