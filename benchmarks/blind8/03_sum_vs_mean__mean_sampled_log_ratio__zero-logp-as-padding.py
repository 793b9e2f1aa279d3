"""Slip: counts the tokens as the entries whose policy log probability is nonzero (treating 0.0 as
padding, a habit from zero-padded logprob tensors) instead of n, so a response with a token of
probability 1 is divided by too few tokens.
"""

import math


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over the tokens of one response of log π(y_t) − log π_ref(y_t)."""
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError(f"lengths differ: {len(policy_logps)} vs {len(reference_logps)}")
    for name, seq in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in seq:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} has an entry that is not finite or is above 0: {x!r}")
    n_valid = sum(1 for p in policy_logps if p != 0.0) or len(policy_logps)
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / n_valid
