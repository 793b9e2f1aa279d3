"""notebook: 03_sum_vs_mean
function: mean_sampled_log_ratio
slip: the first token of the response is dropped (a causal-LM shift habit: zip over the lists from index 1, divided by n − 1), instead of averaging over all n tokens."""

import math


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over the tokens of one response of log π(y_t) − log π_ref(y_t)."""
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("the two token lists have different lengths")
    for x in (*policy_logps, *reference_logps):
        if not math.isfinite(x) or x > 0:
            raise ValueError(f"not a log probability: {x}")
    diffs = [p - q for p, q in zip(policy_logps[1:], reference_logps[1:])]
    return math.fsum(diffs) / len(diffs)
