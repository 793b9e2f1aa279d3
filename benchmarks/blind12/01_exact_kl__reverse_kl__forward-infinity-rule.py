"""Slip: keeps forward_kl's zero rules (skip p_i = 0, infinity when q_i = 0 < p_i) instead of swapping them: a q_i = 0 < p_i gives inf where the term should count 0, and p_i = 0 < q_i crashes instead of giving inf."""

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


def reverse_kl(policy, reference):
    """KL(reference || policy) = sum over q_i > 0 of q_i * log(q_i / p_i)."""
    _check_distributions(policy, reference, allow_zeros=True)
    terms = []
    for p, q in zip(policy, reference):
        if q == 0 and p > 0:
            return math.inf
        if p == 0 and q == 0:
            continue
        terms.append(q * math.log(q / p))
    return math.fsum(terms)
