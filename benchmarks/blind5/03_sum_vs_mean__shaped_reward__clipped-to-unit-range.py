"""notebook: 03_sum_vs_mean
function: shaped_reward
slip: the shaped reward is clipped to [−1, 1] (a reward-clipping habit from RL trainers), so base_reward − beta · mean outside that range is cut instead of returned as it is."""

import math


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over the tokens of one response of log π(y_t) − log π_ref(y_t)."""
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("the two token lists have different lengths")
    for x in (*policy_logps, *reference_logps):
        if not math.isfinite(x) or x > 0:
            raise ValueError(f"not a log probability: {x}")
    diffs = [p - q for p, q in zip(policy_logps, reference_logps)]
    return math.fsum(diffs) / len(diffs)


def shaped_reward(base_reward, policy_logps, reference_logps, beta):
    """RLEF-style shaped reward: base_reward − beta · mean token log ratio of the response."""
    if not math.isfinite(base_reward):
        raise ValueError(f"base_reward must be finite, got {base_reward}")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError(f"beta must be finite and >= 0, got {beta}")
    reward = base_reward - beta * mean_sampled_log_ratio(policy_logps, reference_logps)
    return min(1.0, max(-1.0, reward))
