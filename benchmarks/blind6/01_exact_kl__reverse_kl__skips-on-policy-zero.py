"""notebook: 01_exact_kl
function: reverse_kl
slip: keeps forward_kl's zero rule (skips the terms with p_i = 0) instead of skipping q_i = 0 and returning math.inf when p_i = 0 < q_i, so a policy that misses reference mass gets a finite, even negative, value."""

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
                raise ValueError(f"{name} has an entry outside [0, 1] or not finite: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")
        if not allow_zeros and any(x == 0 for x in dist):
            raise ValueError(f"{name} has a zero entry: the log ratio is undefined")


def reverse_kl(policy, reference):
    _check_distributions(policy, reference, allow_zeros=True)
    terms = []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            continue
        terms.append(q * math.log(q / p))
    return math.fsum(terms)
