"""notebook: 01_exact_kl
function: reverse_kl
slip: the infinity rule is copied from forward_kl (math.inf when q_i = 0 < p_i) instead of the swapped rule (math.inf when p_i = 0 < q_i), so a reference with a zero where the policy has mass gives inf, and a policy zero under reference mass divides by zero."""

import math


def _check_distributions(policy, reference, allow_zeros):
    """Raise ValueError unless policy and reference are valid distributions of equal length."""
    for name, dist in (("policy", policy), ("reference", reference)):
        if len(dist) == 0:
            raise ValueError(f"{name} is empty")
    if len(policy) != len(reference):
        raise ValueError(f"lengths differ: {len(policy)} vs {len(reference)}")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1] or not finite: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")
        if not allow_zeros and any(x == 0 for x in dist):
            raise ValueError(f"{name} has a zero entry: the ratio is undefined")


def reverse_kl(policy, reference):
    """KL(reference ‖ policy) = sum over q_i > 0 of q_i · log(q_i / p_i)."""
    _check_distributions(policy, reference, allow_zeros=True)
    terms = []
    for p, q in zip(policy, reference):
        if q == 0 and p > 0:
            return math.inf
        if q == 0:
            continue
        terms.append(q * math.log(q / p))
    return math.fsum(terms)
