"""notebook: 02_clipped_estimators
function: k2
library: OpenRLHF/OpenRLHF@3c3be6234e0c openrlhf/models/utils.py (compute_approx_kl, kl_estimator="k2")
slip: the library's 0.5 * (log ratio)^2 is computed in float32 and clamped at 10, so a sample with |logp - ref_logp| > sqrt(20) ~ 4.47 gets 10 instead of the full square."""

import numpy as np


def _log_prob_arrays(logp, ref_logp):
    """Both inputs as float64 arrays, checked as the notebook's text asks."""
    a = np.asarray(logp, dtype=np.float64)
    b = np.asarray(ref_logp, dtype=np.float64)
    for name, x in (("logp", a), ("ref_logp", b)):
        if not np.isfinite(x).all():
            raise ValueError(f"{name} holds a non-finite entry (NaN or inf)")
        if (x > 0).any():
            raise ValueError(f"{name} holds an entry above 0: not a log probability")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError as exc:
        raise ValueError(f"shapes {a.shape} and {b.shape} do not broadcast") from exc
    return a, b


def k2(logp, ref_logp):
    """k2 as OpenRLHF's compute_approx_kl computes it: float32 half square, clamped to [-10, 10]."""
    a, b = _log_prob_arrays(logp, ref_logp)
    d = a.astype(np.float32) - b.astype(np.float32)
    half_square = d**2 / np.float32(2.0)
    return np.clip(half_square, -10.0, 10.0).astype(np.float64)
