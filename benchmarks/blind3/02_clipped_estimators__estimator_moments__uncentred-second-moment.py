"""notebook: 02_clipped_estimators
function: estimator_moments
slip: returns the second moment sum p_x f(x)^2 as the variance, forgetting to subtract the mean."""

import math

import numpy as np


def _check_distributions(policy, reference):
    for name, dist in (("policy", policy), ("reference", reference)):
        if len(dist) == 0:
            raise ValueError(f"{name} is empty")
    if len(policy) != len(reference):
        raise ValueError(f"policy has {len(policy)} entries, reference {len(reference)}")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry {x} outside [0, 1]")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} sums to {math.fsum(dist)}, not 1")


def estimator_moments(policy, reference, estimator):
    _check_distributions(policy, reference)
    ps, fs = [], []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            raise ValueError("q_x = 0 < p_x: log q_x is -inf, the estimator is undefined")
        ps.append(p)
        fs.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
    mean = math.fsum(p * f for p, f in zip(ps, fs))
    variance = math.fsum(p * f * f for p, f in zip(ps, fs))
    return mean, variance
