"""Slip: divides the summed token log ratios by n − 1 (a Bessel-style correction carried over from variance code) instead of by n; a one-token response divides by zero."""

import math


def _check_logps(policy_logps, reference_logps):
    """Raise ValueError unless both are equal-length, non-empty lists of finite log probabilities."""
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("policy_logps and reference_logps have different lengths")
    for name, seq in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in seq:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} has an entry that is not finite or above 0: {x}")


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over the tokens of one response of log π(y_t) − log π_ref(y_t)."""
    _check_logps(policy_logps, reference_logps)
    n = len(policy_logps)
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / (n - 1)
