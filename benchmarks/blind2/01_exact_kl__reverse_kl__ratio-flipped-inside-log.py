"""
notebook: 01_exact_kl
function: reverse_kl
slip: weights by the reference correctly but keeps the policy-first log ratio, sum_i q_i log(p_i/q_i), which is minus KL(reference || policy).
"""

import math


def _check_distributions(policy, reference):
    if len(policy) == 0 or len(policy) != len(reference):
        raise ValueError("empty or unequal distributions")
    for d in (policy, reference):
        if any((not math.isfinite(x)) or x < 0 or x > 1 for x in d):
            raise ValueError("entries must be finite and in [0, 1]")
        if abs(math.fsum(d) - 1) > 1e-9 * len(d):
            raise ValueError("distribution does not sum to 1")


def reverse_kl(policy, reference):
    _check_distributions(policy, reference)
    terms = []
    for p, q in zip(policy, reference):
        if q == 0:
            continue
        if p == 0:
            return math.inf
        terms.append(q * math.log(p / q))
    return math.fsum(terms)
