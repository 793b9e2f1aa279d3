"""
notebook: 02_clipped_estimators
function: monte_carlo_kl
slip: indices are only checked against the upper bound (x < n), so a negative index such as -1 is accepted and silently reads the last outcome instead of raising ValueError.
"""

import math

import numpy as np


def _check_distributions(policy, reference):
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("empty distribution")
    if len(policy) != len(reference):
        raise ValueError("lengths differ")
    for name, d in (("policy", policy), ("reference", reference)):
        for x in d:
            if not math.isfinite(x) or not (0 <= x <= 1):
                raise ValueError(f"{name} entry {x} not in [0, 1]")
        if abs(math.fsum(d) - 1) > 1e-9 * len(d):
            raise ValueError(f"{name} must sum to 1")


def monte_carlo_kl(samples, policy, reference, estimator):
    """Sample mean of estimator(log p_x, log q_x) over the sampled outcome indices."""
    _check_distributions(policy, reference)
    samples = list(samples)
    if len(samples) == 0:
        raise ValueError("no samples")
    n = len(policy)
    values = []
    for x in samples:
        if not isinstance(x, (int, np.integer)):
            raise ValueError(f"sample {x!r} is not an integer index")
        if x >= n:
            raise ValueError(f"sample {x} out of range for {n} outcomes")
        p, q = policy[x], reference[x]
        if p == 0 or q == 0:
            raise ValueError(f"sampled outcome {x} has probability 0")
        values.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
    return math.fsum(values) / len(values)
