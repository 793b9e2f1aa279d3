"""Slip: returns the raw second moment sum p_x f(x)^2 as the variance, dropping the subtraction of the mean, instead of sum p_x (f(x) - mean)^2."""

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
    np.broadcast_shapes(a.shape, b.shape)
    return a, b


def _check_distributions(policy, reference):
    """Raise ValueError unless policy and reference are distributions of equal length (zeros allowed)."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("the distributions have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry that is not a probability: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def k1(logp, ref_logp):
    """Schulman's k1: logp - ref_logp, elementwise."""
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
            raise ValueError("q_x = 0 < p_x: the estimator is undefined there")
        weights.append(p)
        values.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
    mean = math.fsum(w * v for w, v in zip(weights, values))
    variance = math.fsum(w * v * v for w, v in zip(weights, values))
    return mean, variance
