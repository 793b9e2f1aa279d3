"""notebook: 02_clipped_estimators
function: clipped_k1
slip: uses the smooth max softplus(x) = log(1 + exp(x)) (a deep-learning habit for a differentiable relu) instead of max(0, x)."""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    for name, x in (("logp", a), ("ref_logp", b)):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} holds NaN or an infinite value")
        if (x > 0).any():
            raise ValueError(f"{name} holds an entry above 0: not a log probability")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError as e:
        raise ValueError(f"shapes {a.shape} and {b.shape} do not broadcast") from e
    return a, b


def clipped_k1(logp, ref_logp):
    lp, lq = _log_prob_arrays(logp, ref_logp)
    return np.logaddexp(0.0, lp - lq)
