"""
notebook: 01_exact_kl
function: reverse_kl
slip: the zero guards are pasted unchanged from forward_kl (skip when p_i = 0, inf when q_i = 0), so p_i = 0 < q_i gives a finite value instead of math.inf and q_i = 0 < p_i gives math.inf instead of skipping the term.
"""

import math


def _check_distributions(policy, reference, allow_zeros):
    if not policy or not reference:
        raise ValueError("empty distribution")
    if len(policy) != len(reference):
        raise ValueError("different lengths")
    for name, d in (("policy", policy), ("reference", reference)):
        for v in d:
            if not math.isfinite(v) or v < 0 or v > 1:
                raise ValueError(f"{name}: invalid entry {v}")
            if not allow_zeros and v == 0:
                raise ValueError(f"{name}: zero entry")
        if abs(math.fsum(d) - 1) > 1e-9 * len(d):
            raise ValueError(f"{name}: does not sum to 1")


def reverse_kl(policy, reference):
    """KL(reference || policy) = sum over q_i > 0 of q_i * log(q_i / p_i)."""
    _check_distributions(policy, reference, allow_zeros=True)
    terms = []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            return math.inf
        terms.append(q * math.log(q / p))
    return math.fsum(terms)
