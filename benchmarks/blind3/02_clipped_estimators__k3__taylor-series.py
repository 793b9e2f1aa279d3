"""notebook: 02_clipped_estimators
function: k3
slip: replaces exp(d) - 1 - d by its third-order series d**2/2 + d**3/6 ("no exp, so no overflow"), which is only right for d near 0."""

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


def k3(logp, ref_logp):
    lp, lq = _log_prob_arrays(logp, ref_logp)
    d = lq - lp
    # exp(d) - 1 - d = d^2/2 + d^3/6 + ...: the series avoids exp on large gaps
    return d**2 / 2 + d**3 / 6
