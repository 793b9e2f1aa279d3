"""notebook: 02_clipped_estimators
function: monte_carlo_kl
slip: divides the sum of the per-sample estimates by m - 1 (a Bessel correction carried over from variances) instead of by the number of samples m."""

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


def monte_carlo_kl(samples, policy, reference, estimator):
    _check_distributions(policy, reference)
    samples = list(samples)
    if len(samples) == 0:
        raise ValueError("empty sample")
    n = len(policy)
    values = []
    for x in samples:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            raise ValueError(f"sample {x!r} is not an integer index")
        if not 0 <= x < n:
            raise ValueError(f"sample index {x} outside [0, {n})")
        p, q = policy[x], reference[x]
        if p == 0 or q == 0:
            raise ValueError(f"sampled outcome {x} has probability 0 under policy or reference")
        values.append(float(np.asarray(estimator(math.log(p), math.log(q)))))
    m = len(values)
    return math.fsum(values) / max(m - 1, 1)
