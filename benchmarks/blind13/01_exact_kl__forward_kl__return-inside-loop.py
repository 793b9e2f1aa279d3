"""Slip: the return statement sits inside the loop over outcomes, so only the first term p_1 log(p_1/q_1) is returned instead of the sum over all outcomes."""

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
        return math.fsum(terms)
    return math.fsum(terms)
