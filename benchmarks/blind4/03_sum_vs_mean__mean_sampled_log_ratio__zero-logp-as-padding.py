"""notebook: 03_sum_vs_mean
function: mean_sampled_log_ratio
slip: tokens whose policy log probability is exactly 0.0 are dropped as if they were padding (and left out of n), although 0 is a valid log probability (probability 1)."""

import math


def mean_sampled_log_ratio(policy_logps, reference_logps):
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("policy and reference token lists have different lengths")
    for name, xs in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in xs:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} has an entry that is not a log probability: {x}")
    diffs = [p - q for p, q in zip(policy_logps, reference_logps) if p != 0.0]
    if not diffs:
        return 0.0
    return math.fsum(diffs) / len(diffs)
