"""
notebook: 01_exact_kl
function: forward_kl
slip: divides the policy-weighted sum sum_i p_i log(p_i/q_i) by the number of outcomes n, as if the KL were an average over outcomes.
"""

import math


def _check(policy, reference):
    if not policy or not reference or len(policy) != len(reference):
        raise ValueError("distributions must be non-empty and of the same length")
    for dist in (policy, reference):
        for x in dist:
            if not math.isfinite(x) or not 0.0 <= x <= 1.0:
                raise ValueError(f"bad probability {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError("a distribution does not sum to 1")


def forward_kl(policy, reference):
    _check(policy, reference)
    terms = []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            return math.inf
        terms.append(p * math.log(p / q))
    # average KL contribution per outcome
    return math.fsum(terms) / len(policy)
