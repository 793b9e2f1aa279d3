"""
notebook: 02_clipped_estimators
function: clipped_expectation
slip: q_i is floored at 1e-12 to avoid a division by zero, so q_i = 0 < p_i gives a large finite number instead of math.inf.
"""

import math


def _check_distributions(policy, reference):
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("empty distribution")
    if len(policy) != len(reference):
        raise ValueError("policy and reference differ in length")
    for name, d in (("policy", policy), ("reference", reference)):
        if any((not math.isfinite(x)) or x < 0 or x > 1 for x in d):
            raise ValueError(f"{name} has entries that are not probabilities")
        if abs(math.fsum(d) - 1.0) > 1e-9 * len(d):
            raise ValueError(f"{name} does not sum to 1")


def clipped_expectation(policy, reference):
    """Expectation under the policy of max(0, log(p_i / q_i))."""
    _check_distributions(policy, reference)
    EPS = 1e-12
    terms = []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        terms.append(p * max(0.0, math.log(p / max(q, EPS))))
    return math.fsum(terms)
