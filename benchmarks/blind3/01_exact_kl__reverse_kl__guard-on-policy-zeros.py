"""notebook: 01_exact_kl
function: reverse_kl
slip: copies forward_kl's zero rules unchanged (skip terms with p_i = 0, inf when q_i = 0 < p_i) instead of swapping them (skip q_i = 0, inf when p_i = 0 < q_i)."""

import math


def _check_distributions(policy, reference, allow_zeros):
    for name, dist in (("policy", policy), ("reference", reference)):
        if len(dist) == 0:
            raise ValueError(f"{name} is empty")
    if len(policy) != len(reference):
        raise ValueError(f"policy has {len(policy)} entries, reference {len(reference)}")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry {x} outside [0, 1]")
            if not allow_zeros and x == 0:
                raise ValueError(f"{name} has a zero entry")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} sums to {math.fsum(dist)}, not 1")


def reverse_kl(policy, reference):
    _check_distributions(policy, reference, allow_zeros=True)
    terms = []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            return math.inf
        terms.append(q * math.log(q / p))
    return math.fsum(terms)
