"""notebook: 02_clipped_estimators
function: k3
slip: r is computed as exp(ref_logp) / exp(logp), a ratio of probabilities, instead of exp(ref_logp − logp), so very negative log probabilities (e.g. −800) underflow to 0 / 0 = NaN or inf."""

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


def k3(logp, ref_logp):
    """Schulman's k3: r − 1 − log r with r = π_ref(x) / π(x), elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = np.exp(lq) / np.exp(lp)
        return r - 1 - (lq - lp)
