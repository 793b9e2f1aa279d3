"""Slip: the response's log ratio is computed as the log of the mean per-token probability ratio,
log((1/n) Σ exp(p_t − q_t)), instead of the mean of the token log ratios (1/n) Σ (p_t − q_t);
the two agree only when every token has the same log ratio."""

import math


def _check_logps(policy_logps, reference_logps):
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError(f"lengths differ: {len(policy_logps)} vs {len(reference_logps)}")
    for name, seq in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in seq:
            if not math.isfinite(x):
                raise ValueError(f"{name} has a non-finite entry: {x}")
            if x > 0:
                raise ValueError(f"{name} has an entry above 0: {x}")


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over the tokens of one response of log π(y_t) − log π_ref(y_t)."""
    _check_logps(policy_logps, reference_logps)
    n = len(policy_logps)
    return math.log(math.fsum(math.exp(p - q) for p, q in zip(policy_logps, reference_logps)) / n)
