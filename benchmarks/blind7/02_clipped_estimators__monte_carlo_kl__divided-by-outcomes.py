"""Slip: the summed estimator values are divided by the number of outcomes n = len(policy) (a
variable reused from the index check) instead of by the number of samples m."""

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


def monte_carlo_kl(samples, policy, reference, estimator):
    """Sample mean of estimator(log p_x, log q_x) over the sampled outcome indices."""
    _check_distributions(policy, reference)
    n = len(policy)
    samples = list(samples)
    if len(samples) == 0:
        raise ValueError("empty sample")
    for x in samples:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            raise ValueError(f"sample index {x!r} is not an integer")
        if not 0 <= x < n:
            raise ValueError(f"sample index {x} outside [0, {n})")
        if policy[x] == 0 or reference[x] == 0:
            raise ValueError(f"sampled outcome {x} has p_x = 0 or q_x = 0")
    values = [
        float(np.asarray(estimator(math.log(policy[x]), math.log(reference[x])))) for x in samples
    ]
    return math.fsum(values) / n
