"""notebook: 02_clipped_estimators
function: clipped_expectation
slip: the clipped terms are divided by the policy mass of the outcomes whose log ratio is positive (a mean over the kept samples) instead of being summed as p_i · max(0, log(p_i/q_i))."""

import math


def _check_distributions(policy, reference):
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("policy and reference have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry that is not a probability: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def clipped_expectation(policy, reference):
    _check_distributions(policy, reference)
    terms, kept_mass = [], []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            return math.inf
        lr = math.log(p / q)
        if lr > 0:
            terms.append(p * lr)
            kept_mass.append(p)
    if not terms:
        return 0.0
    return math.fsum(terms) / math.fsum(kept_mass)
