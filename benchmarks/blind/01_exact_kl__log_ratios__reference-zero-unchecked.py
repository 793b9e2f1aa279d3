"""
notebook: 01_exact_kl
function: log_ratios
slip: only zeros in the policy are rejected; a zero in the reference is not checked, so log(p_i / 0) raises ZeroDivisionError instead of the ValueError the text asks for.
"""

import math


def _check_distributions(policy, reference, allow_zeros):
    if len(policy) == 0 or len(reference) == 0:
        raise ValueError("distributions must be non-empty")
    if len(policy) != len(reference):
        raise ValueError(f"length mismatch: {len(policy)} vs {len(reference)}")
    for name, dist in (("policy", policy), ("reference", reference)):
        for x in dist:
            if not math.isfinite(x) or x < 0 or x > 1:
                raise ValueError(f"{name} has an invalid probability {x!r}")
        if abs(math.fsum(dist) - 1.0) > 1e-9 * len(dist):
            raise ValueError(f"{name} does not sum to 1")


def log_ratios(policy, reference):
    """Per-outcome log ratios log(p_i / q_i) (natural log)."""
    _check_distributions(policy, reference, allow_zeros=True)
    # a zero probability in the policy makes the log undefined
    if any(p == 0 for p in policy):
        raise ValueError("policy has a zero probability: log ratio undefined")
    return [math.log(p / q) for p, q in zip(policy, reference)]
