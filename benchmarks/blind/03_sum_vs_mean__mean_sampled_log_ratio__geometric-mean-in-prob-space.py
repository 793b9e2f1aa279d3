"""
notebook: 03_sum_vs_mean
function: mean_sampled_log_ratio
slip: computes the geometric means literally in probability space (product of exp(log p) to the power 1/n, then the log of their ratio) instead of fsum(p - q) / n, which underflows to 0 for long or unlikely responses and then fails or gives a wrong number.
"""

import math


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Log ratio of the geometric-mean token probabilities of one response."""
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty response")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("policy and reference have different numbers of tokens")
    for x in list(policy_logps) + list(reference_logps):
        if not math.isfinite(x) or x > 0:
            raise ValueError(f"invalid log probability {x!r}")
    n = len(policy_logps)
    geo_policy = math.prod(math.exp(p) for p in policy_logps) ** (1.0 / n)
    geo_reference = math.prod(math.exp(q) for q in reference_logps) ** (1.0 / n)
    return math.log(geo_policy / geo_reference)
