"""Slip: takes the expectation of the clipped log ratio under the reference (sum of q_i * max(0, log(p_i/q_i))) instead of under the policy, which samples the outcomes."""

import math


def _check_distributions(policy, reference):
    """Raise ValueError unless policy and reference are distributions of equal length (zeros allowed)."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("policy and reference have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1]: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def clipped_expectation(policy, reference):
    """Expectation under the policy of the clipped estimator: sum of p_i * max(0, log(p_i / q_i))."""
    _check_distributions(policy, reference)
    terms = []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            return math.inf
        terms.append(q * max(0.0, math.log(p / q)))
    return math.fsum(terms)
