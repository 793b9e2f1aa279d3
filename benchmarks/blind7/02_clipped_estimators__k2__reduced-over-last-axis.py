"""Slip: k2 is reduced over the last (token) axis, returning the per-sequence mean of
0.5·(logp − ref_logp)² as a trainer's per-sample KL would, instead of the elementwise array of the
broadcast shape."""

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


def k2(logp, ref_logp):
    """Schulman's k2: 0.5 · (log π(x) − log π_ref(x))², elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    d = a - b
    if d.ndim == 0:
        return 0.5 * d**2
    return 0.5 * np.mean(d**2, axis=-1)
