"""Slip: takes the penalty from the log of the mean per-token probability ratio, log(mean_t exp(p_t − q_t)), instead of the mean of the token log ratios; the two agree only when every token has the same log ratio (as in the story's response)."""

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


def shaped_reward(base_reward, policy_logps, reference_logps, beta):
    """RLEF-style shaped reward: base_reward − beta · mean token log ratio of the response."""
    if not math.isfinite(base_reward):
        raise ValueError("base_reward is not finite")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    _check_logps(policy_logps, reference_logps)
    n = len(policy_logps)
    penalty = math.log(
        math.fsum(math.exp(p - q) for p, q in zip(policy_logps, reference_logps)) / n
    )
    return base_reward - beta * penalty
