"""
notebook: 02_clipped_estimators
function: k3
slip: computes r correctly as exp(ref_logp - logp) but takes the log term as log(ref_logp / logp), the log of the ratio of the two log probabilities, instead of log r = ref_logp - logp.
"""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    if not np.isfinite(a).all() or not np.isfinite(b).all():
        raise ValueError("non-finite log probability")
    if np.any(a > 0) or np.any(b > 0):
        raise ValueError("log probabilities must be <= 0")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError as exc:
        raise ValueError(f"shapes {a.shape} and {b.shape} do not broadcast") from exc
    return a, b


def k3(logp, ref_logp):
    lp, lq = _log_prob_arrays(logp, ref_logp)
    r = np.exp(lq - lp)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_r = np.log(lq / lp)
    return r - 1.0 - log_r
