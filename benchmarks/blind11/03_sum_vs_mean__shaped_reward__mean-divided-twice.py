"""Slip: divides the already averaged log ratio by the number of tokens a second time, so the
penalty is beta * mean / n instead of beta * mean.
"""

import math


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over the tokens of one response of log pi(y_t) - log pi_ref(y_t)."""
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError(f"lengths differ: {len(policy_logps)} vs {len(reference_logps)}")
    for name, seq in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in seq:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} has an entry that is not finite or above 0: {x}")
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def shaped_reward(base_reward, policy_logps, reference_logps, beta):
    """RLEF-style shaped reward: base_reward - beta * mean token log ratio of the response."""
    if not math.isfinite(base_reward):
        raise ValueError(f"base_reward must be finite, got {base_reward}")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError(f"beta must be finite and >= 0, got {beta}")
    mean = mean_sampled_log_ratio(policy_logps, reference_logps)
    return base_reward - beta * mean / len(policy_logps)
