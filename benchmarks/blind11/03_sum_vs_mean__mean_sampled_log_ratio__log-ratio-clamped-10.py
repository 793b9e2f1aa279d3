"""Slip: clamps each token's log ratio to [-10, 10] before averaging (OpenRLHF's stability clamp)
instead of averaging the raw log ratios.
"""

import math


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over the tokens of one response of log pi(y_t) - log pi_ref(y_t)."""
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError(f"lengths differ: {len(policy_logps)} vs {len(reference_logps)}")
    for name, seq in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in seq:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} has an entry that is not finite or above 0: {x}")
    diffs = [min(10.0, max(-10.0, p - q)) for p, q in zip(policy_logps, reference_logps)]
    return math.fsum(diffs) / len(diffs)
