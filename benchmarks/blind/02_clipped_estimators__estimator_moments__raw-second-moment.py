"""
notebook: 02_clipped_estimators
function: estimator_moments
slip: the second value is the raw second moment sum p_x f(x)^2, the mean is never subtracted, so it is not the variance.
"""

import math

import numpy as np


def _check_distributions(policy, reference):
    if len(policy) == 0 or len(policy) != len(reference):
        raise ValueError("distributions must be non-empty and of equal length")
    for name, d in (("policy", policy), ("reference", reference)):
        for x in d:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name}: {x!r} is not a probability")
        if abs(math.fsum(d) - 1) > 1e-9 * len(d):
            raise ValueError(f"{name} does not sum to 1")


def estimator_moments(policy, reference, estimator):
    """Exact (mean, variance) of estimator(log p_x, log q_x) for x ~ policy."""
    _check_distributions(policy, reference)
    weights, values = [], []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            raise ValueError("q_x = 0 < p_x: the estimators are undefined there")
        weights.append(p)
        values.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
    mean = math.fsum(w * v for w, v in zip(weights, values))
    second = math.fsum(w * v * v for w, v in zip(weights, values))
    return mean, second
