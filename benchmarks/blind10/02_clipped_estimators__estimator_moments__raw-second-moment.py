"""Slip: returns the raw second moment sum of p_x·f(x)² as the variance, without subtracting the mean (the deviations are taken from 0, not from the mean)."""

import math

import numpy as np


def _check_distributions(policy, reference):
    """Raise ValueError unless policy and reference are distributions of equal length (zeros allowed)."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("policy and reference have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1] or not finite: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


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
