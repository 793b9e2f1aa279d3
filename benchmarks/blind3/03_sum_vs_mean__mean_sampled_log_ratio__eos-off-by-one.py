"""notebook: 03_sum_vs_mean
function: mean_sampled_log_ratio
slip: divides the summed token log ratios by n + 1 (counting an end-of-sequence token that is not in the lists) instead of by n."""

import math


def _check_logps(policy_logps, reference_logps):
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError(
            f"{len(policy_logps)} policy tokens but {len(reference_logps)} reference tokens"
        )
    for name, seq in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in seq:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} holds {x}: not a finite log probability <= 0")


def mean_sampled_log_ratio(policy_logps, reference_logps):
    _check_logps(policy_logps, reference_logps)
    n = len(policy_logps)
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / (n + 1)
