"""
notebook: 02_clipped_estimators
function: estimator_moments
slip: returns the raw second moment sum_x p_x f(x)^2 as the variance, without subtracting the mean (it is E[f^2], not E[(f - mean)^2]).
"""

import math

import numpy as np


def _check_distributions(policy, reference):
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("empty distribution")
    if len(policy) != len(reference):
        raise ValueError("lengths differ")
    for d in (policy, reference):
        for x in d:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"invalid probability {x}")
        if abs(math.fsum(d) - 1) > 1e-9 * len(d):
            raise ValueError("does not sum to 1")


def estimator_moments(policy, reference, estimator):
    _check_distributions(policy, reference)
    weights, values = [], []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            raise ValueError("q_x = 0 < p_x: the estimator is undefined")
        f = float(np.asarray(estimator(math.log(p), math.log(q))))
        weights.append(p)
        values.append(f)
    mean = math.fsum(w * f for w, f in zip(weights, values))
    variance = math.fsum(w * f * f for w, f in zip(weights, values))
    return mean, variance
