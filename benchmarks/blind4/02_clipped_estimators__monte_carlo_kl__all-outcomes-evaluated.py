"""notebook: 02_clipped_estimators
function: monte_carlo_kl
slip: the estimator is evaluated once on every outcome (vectorised over np.log(policy), np.log(reference)) and then indexed by the samples, so a zero probability on an outcome that was never sampled raises instead of being ignored."""

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


def monte_carlo_kl(samples, policy, reference, estimator):
    _check_distributions(policy, reference)
    samples = list(samples)
    if len(samples) == 0:
        raise ValueError("empty sample")
    n = len(policy)
    for x in samples:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= x < n:
            raise ValueError(f"sample {x!r} is not an outcome index in [0, {n})")
        if policy[x] == 0 or reference[x] == 0:
            raise ValueError(f"sampled outcome {x} has probability 0")
    with np.errstate(divide="ignore"):
        per_outcome = np.asarray(estimator(np.log(policy), np.log(reference)), dtype=np.float64)
    return math.fsum(float(per_outcome[x]) for x in samples) / len(samples)
