"""
notebook: 01_exact_kl
function: forward_kl
slip: returns the cross-entropy -sum p_i log q_i instead of the KL sum p_i log(p_i / q_i), i.e. the policy's entropy is not subtracted.
"""

import math


def _check_distributions(policy, reference, allow_zeros):
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("empty distribution")
    if len(policy) != len(reference):
        raise ValueError("policy and reference have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or not 0.0 <= x <= 1.0:
                raise ValueError(f"{name}: entry {x!r} is not a probability")
            if not allow_zeros and x == 0:
                raise ValueError(f"{name}: zero probability")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def forward_kl(policy, reference):
    """KL(policy || reference), the policy-weighted log loss against the reference."""
    _check_distributions(policy, reference, allow_zeros=True)
    terms = []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            return math.inf
        # expected surprise of the reference under samples from the policy
        terms.append(-p * math.log(q))
    return math.fsum(terms)
