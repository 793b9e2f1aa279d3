"""Slip: returns each outcome's policy-weighted KL term p_i * log(p_i / q_i) instead of the bare
log ratio log(p_i / q_i) the text asks for.
"""

import math


def _check_distributions(policy, reference, allow_zeros):
    """Raise ValueError unless policy and reference are valid distributions of equal length."""
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("a distribution is empty")
    if len(policy) != len(reference):
        raise ValueError(f"lengths differ: {len(policy)} vs {len(reference)}")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an entry outside [0, 1] or not finite: {x}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")
        if not allow_zeros and any(x == 0 for x in dist):
            raise ValueError(f"{name} has a zero entry: the log ratio is undefined")


def log_ratios(policy, reference):
    """Per-outcome log ratios log(p_i / q_i) (natural log)."""
    _check_distributions(policy, reference, allow_zeros=False)
    return [p * math.log(p / q) for p, q in zip(policy, reference)]
