"""Slip: divides the summed token log ratios by n + 1 (counting an end-of-sequence token that is not in the lists) instead of by the number of tokens n."""

import math


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over the tokens of one response of log pi(y_t) - log pi_ref(y_t)."""
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("the token lists have different lengths")
    for x in list(policy_logps) + list(reference_logps):
        if not math.isfinite(x) or x > 0:
            raise ValueError(f"not a log probability: {x}")
    n = len(policy_logps)
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / (n + 1)
