"""notebook: 02_clipped_estimators
function: k1
library: OpenRLHF/OpenRLHF@3c3be6234e0c openrlhf/models/utils.py (compute_approx_kl, kl_estimator="k1")
slip: the library casts both log probabilities to float32 and clamps the log ratio to [-10, 10], so a sample whose log ratio is beyond +-10 gets +-10 instead of logp - ref_logp."""

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


def k1(logp, ref_logp):
    """k1 as OpenRLHF's compute_approx_kl computes it: float32 log ratio clamped to [-10, 10]."""
    a, b = _log_prob_arrays(logp, ref_logp)
    # the library works on .float() copies of both inputs
    log_ratio = a.astype(np.float32) - b.astype(np.float32)
    # k1 leaves the log ratio as it is, then every estimator is clamped to [-10, 10]
    out = np.clip(log_ratio, -10.0, 10.0)
    return out.astype(np.float64)
