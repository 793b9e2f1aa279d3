"""notebook: 02_clipped_estimators
function: k3
slip: forms r as exp(ref_logp) / exp(logp), a ratio of probabilities, instead of exp(ref_logp − logp), so very negative log probabilities underflow to 0 / 0 = NaN (or inf)."""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked; raise ValueError when they are not log probabilities."""
    lp = np.asarray(logp, dtype=np.float64)
    lq = np.asarray(ref_logp, dtype=np.float64)
    for name, a in (("logp", lp), ("ref_logp", lq)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} holds NaN or inf")
        if (a > 0).any():
            raise ValueError(f"{name} holds an entry above 0: not a log probability")
    try:
        np.broadcast_shapes(lp.shape, lq.shape)
    except ValueError as e:
        raise ValueError(f"shapes {lp.shape} and {lq.shape} do not broadcast") from e
    return lp, lq


def k3(logp, ref_logp):
    lp, lq = _log_prob_arrays(logp, ref_logp)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.exp(lq) / np.exp(lp)
        return r - 1 - np.log(r)
