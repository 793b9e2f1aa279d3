"""Slip: divides the fsum of the token log ratios by n with floor division (//) instead of true division, which is right only when the mean happens to be an integer."""

import math


def _check_logps(policy_logps, reference_logps):
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("policy_logps and reference_logps have different lengths")
    for x in list(policy_logps) + list(reference_logps):
        if not math.isfinite(x) or x > 0:
            raise ValueError(f"{x!r} is not a finite log probability <= 0")


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over the tokens of one response of log pi(y_t) - log pi_ref(y_t)."""
    _check_logps(policy_logps, reference_logps)
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) // len(policy_logps)
