"""Slip: divides the weighted sum by the number of outcomes n (a mean over outcomes), instead of returning the plain sum over i of p_i log(p_i / q_i)."""

import math


def _check_distributions(policy, reference, allow_zeros):
    """Raise ValueError unless policy and reference are valid distributions of equal length."""
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
        if not allow_zeros and any(x == 0 for x in dist):
            raise ValueError(f"{name} has a zero entry: the ratio is undefined")


def forward_kl(policy, reference):
    """KL(policy || reference) = sum over p_i > 0 of p_i * log(p_i / q_i)."""
    _check_distributions(policy, reference, allow_zeros=True)
    terms = []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            return math.inf
        terms.append(p * math.log(p / q))
    return math.fsum(terms) / len(policy)
