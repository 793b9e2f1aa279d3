"""Slip: the range check rejects entries >= 1 instead of > 1, so a valid distribution that puts all its mass (1.0) on one outcome raises ValueError instead of giving log ratio 0."""

import math


def _check_distributions(policy, reference, allow_zeros):
    """Raise ValueError unless policy and reference are valid distributions of equal length."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError("policy and reference have different lengths")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x >= 1:
                raise ValueError(f"{name} has an entry outside [0, 1]: {x}")
            if not allow_zeros and x == 0:
                raise ValueError(f"{name} has a zero entry: the ratio is undefined")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def log_ratios(policy, reference):
    """Per-outcome log ratios log(p_i / q_i) (natural log)."""
    _check_distributions(policy, reference, allow_zeros=False)
    return [math.log(p / q) for p, q in zip(policy, reference)]
