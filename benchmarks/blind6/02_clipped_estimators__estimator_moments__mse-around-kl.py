"""notebook: 02_clipped_estimators
function: estimator_moments
slip: computes the second moment around the exact KL (the mean squared error) instead of around the estimator's own mean, which differs for biased estimators (k2, clipped_k1)."""

import math

import numpy as np


def _check_distributions(policy, reference):
    """Raise ValueError unless policy and reference are distributions of equal length (zeros allowed)."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("the distributions have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1] or not finite: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def estimator_moments(policy, reference, estimator):
    _check_distributions(policy, reference)
    if any(q == 0 < p for p, q in zip(policy, reference)):
        raise ValueError("q_x = 0 < p_x: the estimators are undefined there")
    pairs = [(p, q) for p, q in zip(policy, reference) if p > 0]
    values = [float(np.asarray(estimator(math.log(p), math.log(q)))) for p, q in pairs]
    mean = math.fsum(p * v for (p, _), v in zip(pairs, values))
    kl = math.fsum(p * math.log(p / q) for p, q in pairs)
    variance = math.fsum(p * (v - kl) ** 2 for (p, _), v in zip(pairs, values))
    return mean, variance
