"""Slip: the zero rules are copied unchanged from forward_kl (skip a term when p_i = 0, return
math.inf when q_i = 0 < p_i) instead of swapped for the reverse direction (skip when q_i = 0, inf
when p_i = 0 < q_i); any zero probability gives the wrong answer."""

import math


def _check_distributions(policy, reference, allow_zeros):
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
        if not allow_zeros and any(x == 0 for x in dist):
            raise ValueError(f"{name} has a zero entry")


def reverse_kl(policy, reference):
    """KL(reference ‖ policy) = sum over q_i > 0 of q_i · log(q_i / p_i)."""
    _check_distributions(policy, reference, allow_zeros=True)
    terms = []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            return math.inf
        terms.append(q * math.log(q / p))
    return math.fsum(terms)
