"""Slip: returns the symmetrised (Jeffreys-style) average 0.5 * (KL(pi||ref) + KL(ref||pi)) instead of KL(reference || policy) alone."""

import math


def _check_distributions(policy, reference, allow_zeros):
    """Raise ValueError unless policy and reference are valid distributions of equal length."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("policy and reference have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1]: {x}")
            if not allow_zeros and x == 0:
                raise ValueError(f"{name} has a zero entry: the ratio is undefined")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def _kl(a, b):
    terms = []
    for x, y in zip(a, b):
        if x == 0:
            continue
        if y == 0:
            return math.inf
        terms.append(x * math.log(x / y))
    return math.fsum(terms)


def reverse_kl(policy, reference):
    """KL(reference || policy) = sum over q_i > 0 of q_i * log(q_i / p_i)."""
    _check_distributions(policy, reference, allow_zeros=True)
    return 0.5 * (_kl(reference, policy) + _kl(policy, reference))
