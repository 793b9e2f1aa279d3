"""Slip: when a distribution does not sum to 1, it silently renormalises it (p / sum(p)) instead of
raising ValueError as the text asks."""

import math


def _check_distributions(policy, reference, allow_zeros):
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("the distributions have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry that is not a probability: {x}")
            if not allow_zeros and x == 0:
                raise ValueError(f"{name} has a zero entry: the log ratio is undefined")


def _renormalise(dist):
    total = math.fsum(dist)
    if abs(total - 1.0) > 1e-9 * len(dist):
        return [x / total for x in dist]
    return list(dist)


def log_ratios(policy, reference):
    """Per-outcome log ratios log(p_i / q_i) (natural log)."""
    _check_distributions(policy, reference, allow_zeros=False)
    policy, reference = _renormalise(policy), _renormalise(reference)
    return [math.log(p / q) for p, q in zip(policy, reference)]
