"""notebook: 02_clipped_estimators
function: estimator_moments
slip: the mean is policy-weighted but the variance is the plain average of (f(x) − mean)² over the outcomes with p_x > 0, not weighted by p_x."""

import math

import numpy as np


def _check_distributions(policy, reference):
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("policy and reference have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry that is not a probability: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def estimator_moments(policy, reference, estimator):
    _check_distributions(policy, reference)
    ps, fs = [], []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            raise ValueError("q_x = 0 < p_x: the estimators are undefined there")
        ps.append(p)
        fs.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
    mean = math.fsum(p * f for p, f in zip(ps, fs))
    variance = math.fsum((f - mean) ** 2 for f in fs) / len(fs)
    return mean, variance
