"""notebook: 01_exact_kl
function: forward_kl
slip: returns math.inf as soon as some q_i is 0, before skipping the terms with p_i = 0, so an outcome that both distributions give probability 0 makes the KL infinite instead of contributing 0."""

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


def forward_kl(policy, reference):
    _check_distributions(policy, reference, allow_zeros=True)
    terms = []
    for p, q in zip(policy, reference):
        if q == 0:
            return math.inf
        if p == 0:
            continue
        terms.append(p * math.log(p / q))
    return math.fsum(terms)
