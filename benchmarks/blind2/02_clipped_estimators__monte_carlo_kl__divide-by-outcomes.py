"""
notebook: 02_clipped_estimators
function: monte_carlo_kl
slip: sums the estimator over the samples but divides by the number of outcomes n = len(policy) instead of the number of samples m.
"""

import math

import numpy as np


def _check_distributions(policy, reference):
    if len(policy) == 0 or len(policy) != len(reference):
        raise ValueError("distributions must be non-empty and the same length")
    for d in (policy, reference):
        if any(not math.isfinite(x) or x < 0 or x > 1 for x in d):
            raise ValueError("entries must be finite probabilities")
        if abs(math.fsum(d) - 1.0) > 1e-9 * len(d):
            raise ValueError("distribution must sum to 1")


def monte_carlo_kl(samples, policy, reference, estimator):
    _check_distributions(policy, reference)
    samples = list(samples)
    if len(samples) == 0:
        raise ValueError("empty sample")
    n = len(policy)
    vals = []
    for x in samples:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            raise ValueError(f"sample {x!r} is not an integer index")
        if x < 0 or x >= n:
            raise ValueError(f"sample index {x} out of range [0, {n})")
        p, q = policy[x], reference[x]
        if p == 0 or q == 0:
            raise ValueError(f"outcome {x} has zero probability")
        vals.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
    return math.fsum(vals) / n
