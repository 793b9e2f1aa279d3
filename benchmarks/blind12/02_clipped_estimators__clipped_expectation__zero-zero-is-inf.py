"""Slip: tests q_i = 0 before skipping p_i = 0, so an outcome with p_i = q_i = 0 returns math.inf instead of contributing 0."""

import math


def _check_distributions(policy, reference):
    """Raise ValueError unless policy and reference are distributions of equal length (zeros allowed)."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("the distributions have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry that is not a probability: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def clipped_expectation(policy, reference):
    """Expectation under the policy of the clipped estimator: sum of p_i * max(0, log(p_i / q_i))."""
    _check_distributions(policy, reference)
    terms = []
    for p, q in zip(policy, reference):
        if q == 0:
            return math.inf
        if p == 0:
            continue
        terms.append(p * max(0.0, math.log(p / q)))
    return math.fsum(terms)
