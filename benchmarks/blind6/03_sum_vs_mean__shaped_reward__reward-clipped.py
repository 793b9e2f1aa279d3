"""notebook: 03_sum_vs_mean
function: shaped_reward
slip: clips the base reward to [-5, 5] before subtracting the penalty (a trainer's reward-clipping habit) instead of using it as given."""

import math


def mean_sampled_log_ratio(policy_logps, reference_logps):
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("the token lists have different lengths")
    for name, seq in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in seq:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} holds {x}: not a finite log probability <= 0")
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def shaped_reward(base_reward, policy_logps, reference_logps, beta):
    if not math.isfinite(base_reward):
        raise ValueError("base_reward is not finite")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    ratio = mean_sampled_log_ratio(policy_logps, reference_logps)
    clipped = max(-5.0, min(5.0, base_reward))
    return clipped - beta * ratio
