"""Slip: the variance is taken around the exact KL(π ‖ π_ref) instead of around the estimator's own
mean, i.e. it returns the mean squared error Σ p_x (f(x) − KL)²; right for the unbiased k1 and k3,
too large for k2 and the clipped estimator."""

import math

import numpy as np


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
    kl = math.fsum(p * math.log(p / q) for p, q in zip(policy, reference) if p > 0)
    variance = math.fsum(w * (v - kl) ** 2 for w, v in zip(weights, values))
    return mean, variance
