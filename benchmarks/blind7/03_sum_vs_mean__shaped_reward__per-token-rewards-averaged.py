"""Slip: builds per-token rewards as a trainer does (−beta·(p_t − q_t) on every token, base_reward
added on the last token) and returns their mean over the n tokens, i.e. base_reward/n − beta·mean,
instead of base_reward − beta·mean (right only when base_reward = 0 or n = 1)."""

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
    _check_logps(policy_logps, reference_logps)
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def shaped_reward(base_reward, policy_logps, reference_logps, beta):
    """RLEF-style shaped reward: base_reward − beta · mean token log ratio of the response."""
    if not math.isfinite(base_reward):
        raise ValueError("base_reward is not finite")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    mean_sampled_log_ratio(policy_logps, reference_logps)  # validation
    token_rewards = [-beta * (p - q) for p, q in zip(policy_logps, reference_logps)]
    token_rewards[-1] += base_reward
    return math.fsum(token_rewards) / len(token_rewards)
