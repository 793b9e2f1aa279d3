"""notebook: 02_clipped_estimators
function: estimator_moments
slip: the variance is returned as the raw second moment sum of p_x · f(x)², without subtracting the mean (it should be sum of p_x · (f(x) − mean)²)."""

import math

import numpy as np


def _check_distributions(policy, reference):
    """Raise ValueError unless policy and reference are distributions of equal length (zeros allowed)."""
    for name, dist in (("policy", policy), ("reference", reference)):
        if len(dist) == 0:
            raise ValueError(f"{name} is empty")
    if len(policy) != len(reference):
        raise ValueError(f"lengths differ: {len(policy)} vs {len(reference)}")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1] or not finite: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


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


def k1(logp, ref_logp):
    """Schulman's k1: the sampled log ratio log π(x) − log π_ref(x), elementwise."""
    lp, lq = _log_prob_arrays(logp, ref_logp)
    return lp - lq


def estimator_moments(policy, reference, estimator):
    """Exact (mean, population variance) of estimator(log p_x, log q_x) for x ~ policy."""
    _check_distributions(policy, reference)
    weights, values = [], []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            raise ValueError("q_x = 0 < p_x: log q_x is -inf, the estimator is undefined")
        weights.append(p)
        values.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
    mean = math.fsum(w * v for w, v in zip(weights, values))
    second = math.fsum(w * v * v for w, v in zip(weights, values))
    return mean, second
