"""Slip: clips the shaped reward to [-1, 1] (a reward-clip habit from OpenRLHF/trlX) instead of returning base_reward - beta * mean log ratio unclipped."""

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
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def shaped_reward(base_reward, policy_logps, reference_logps, beta):
    """RLEF-style shaped reward: base_reward - beta * mean token log ratio of the response."""
    if not math.isfinite(base_reward):
        raise ValueError("base_reward must be finite")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    r = base_reward - beta * mean_sampled_log_ratio(policy_logps, reference_logps)
    return max(-1.0, min(1.0, r))
