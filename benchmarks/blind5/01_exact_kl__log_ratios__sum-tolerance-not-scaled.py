"""notebook: 01_exact_kl
function: log_ratios
slip: the sum-to-1 check uses a fixed tolerance of 1e-9 instead of 1e-9 · len, so a long distribution whose sum is off by more than 1e-9 but within 1e-9 · len is rejected with ValueError instead of giving its log ratios."""

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
        if abs(math.fsum(dist) - 1.0) > 1e-9:
            raise ValueError(f"{name} does not sum to 1")
        if not allow_zeros and any(x == 0 for x in dist):
            raise ValueError(f"{name} has a zero entry: the ratio is undefined")


def log_ratios(policy, reference):
    """Per-outcome log ratios log(p_i / q_i) (natural log)."""
    _check_distributions(policy, reference, allow_zeros=False)
    return [math.log(p / q) for p, q in zip(policy, reference)]
