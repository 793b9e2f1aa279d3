"""Slip: skips every outcome where p_i = 0 or q_i = 0, so q_i = 0 < p_i contributes nothing instead
of making the result math.inf.
"""

import math


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


def clipped_expectation(policy, reference):
    """Expectation under the policy of the clipped estimator: sum of p_i * max(0, log(p_i / q_i))."""
    _check_distributions(policy, reference)
    terms = []
    for p, q in zip(policy, reference):
        if p == 0 or q == 0:
            continue
        terms.append(p * max(0.0, math.log(p / q)))
    return math.fsum(terms)
