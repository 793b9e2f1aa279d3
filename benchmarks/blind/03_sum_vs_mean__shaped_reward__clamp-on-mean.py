"""
notebook: 03_sum_vs_mean
function: shaped_reward
slip: the mean log ratio is clamped at 0 ("a KL cannot be negative") before the penalty, so a response the policy finds less likely than the reference gets no bonus: base - beta * max(0, mean) instead of base - beta * mean.
"""

import math


def mean_sampled_log_ratio(policy_logps, reference_logps):
    if len(policy_logps) == 0 or len(policy_logps) != len(reference_logps):
        raise ValueError("token lists must be non-empty and of equal length")
    for x in (*policy_logps, *reference_logps):
        if not math.isfinite(x) or x > 0:
            raise ValueError(f"not a log probability: {x!r}")
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def shaped_reward(base_reward, policy_logps, reference_logps, beta):
    """RLEF-style shaped reward: base_reward - beta * KL term of the response."""
    if not math.isfinite(base_reward):
        raise ValueError("base_reward must be finite")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    kl = mean_sampled_log_ratio(policy_logps, reference_logps)
    kl = max(0.0, kl)  # KL estimate is a divergence: keep it nonnegative
    return base_reward - beta * kl
