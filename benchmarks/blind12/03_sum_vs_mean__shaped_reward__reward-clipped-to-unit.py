"""Slip: clips the shaped reward to [-1, 1] (a reward_clip_range habit from RLHF trainers) instead of returning base_reward - beta * mean unclipped."""

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
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def shaped_reward(base_reward, policy_logps, reference_logps, beta):
    """RLEF-style shaped reward: base_reward - beta * mean token log ratio of the response."""
    if not math.isfinite(base_reward):
        raise ValueError("base_reward is not finite")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    value = base_reward - beta * mean_sampled_log_ratio(policy_logps, reference_logps)
    return max(-1.0, min(1.0, value))
