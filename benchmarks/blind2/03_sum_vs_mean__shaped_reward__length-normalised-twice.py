"""
notebook: 03_sum_vs_mean
function: shaped_reward
slip: divides the already-averaged mean log ratio by the number of tokens n once more, so the penalty is base_reward - beta * mean / n (it shrinks with length instead of staying length-independent).
"""

import math


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Correct callee, from the notebook's text: fsum(p - q) / n with its checks."""
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("token lists have different lengths")
    for x in list(policy_logps) + list(reference_logps):
        if not math.isfinite(x) or x > 0:
            raise ValueError(f"invalid log probability {x}")
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def shaped_reward(base_reward, policy_logps, reference_logps, beta):
    if not math.isfinite(base_reward):
        raise ValueError("base_reward must be finite")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    n = len(policy_logps)
    kl = mean_sampled_log_ratio(policy_logps, reference_logps)
    # per-token penalty, normalised by the response length
    return base_reward - beta * kl / n
