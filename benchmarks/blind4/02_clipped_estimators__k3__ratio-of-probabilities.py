"""notebook: 02_clipped_estimators
function: k3
slip: r is computed as exp(ref_logp) / exp(logp), a ratio of probabilities, so very negative (valid) log probabilities underflow to 0 / 0 = NaN instead of using exp(ref_logp − logp)."""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    for name, x in (("logp", a), ("ref_logp", b)):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} has a non-finite entry")
        if (x > 0).any():
            raise ValueError(f"{name} has an entry above 0: not a log probability")
    np.broadcast_shapes(a.shape, b.shape)  # raises ValueError when they do not broadcast
    return a, b


def k3(logp, ref_logp):
    lp, lq = _log_prob_arrays(logp, ref_logp)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.exp(lq) / np.exp(lp)
        return (r - 1) - np.log(r)
