"""notebook: 02_clipped_estimators
function: clipped_expectation
slip: the weighted sum of the clipped log ratios is divided by the policy mass of the outcomes where the clip does not bite (log ratio > 0), a conditional mean, instead of being returned as the expectation itself."""

import math


def _check_distributions(policy, reference):
    """Raise ValueError unless policy and reference are distributions of equal length (zeros allowed)."""
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


def clipped_expectation(policy, reference):
    """Expectation under the policy of the clipped estimator: sum of p_i · max(0, log(p_i / q_i))."""
    _check_distributions(policy, reference)
    terms, mass = [], []
    for p, q in zip(policy, reference):
        if p == 0:
            continue
        if q == 0:
            return math.inf
        lr = math.log(p / q)
        terms.append(p * max(0.0, lr))
        if lr > 0:
            mass.append(p)
    if not mass:
        return 0.0
    return math.fsum(terms) / math.fsum(mass)
