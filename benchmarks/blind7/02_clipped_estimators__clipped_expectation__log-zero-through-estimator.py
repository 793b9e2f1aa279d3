"""Slip: the expectation is computed by running the vectorised clipped_k1 on np.log of the whole
distributions, so any zero probability (p_i = 0, or q_i = 0) gives log 0 = −inf and a ValueError,
instead of a 0 term for p_i = 0 and math.inf for q_i = 0 < p_i."""

import math

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


def clipped_k1(logp, ref_logp):
    """The clipped sampled log ratio max(0, log π(x) − log π_ref(x)), elementwise."""
    a, b = _log_prob_arrays(logp, ref_logp)
    return np.maximum(0.0, a - b)


def _check_distributions(policy, reference):
    """Raise ValueError unless policy and reference are distributions of equal length (zeros allowed)."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError(f"lengths differ: {len(policy)} vs {len(reference)}")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1] or not finite: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def clipped_expectation(policy, reference):
    """Expectation under the policy of the clipped estimator: sum of p_i · max(0, log(p_i / q_i))."""
    _check_distributions(policy, reference)
    p = np.asarray(policy, dtype=np.float64)
    q = np.asarray(reference, dtype=np.float64)
    with np.errstate(divide="ignore"):
        values = clipped_k1(np.log(p), np.log(q))
    return math.fsum(float(w) * float(v) for w, v in zip(p, values))
