"""notebook: 03_sum_vs_mean
function: shaped_reward
slip: clips the shaped reward to [-1, 1] afterwards (the reward_clip habit of RL trainers), so a reference term that lifts the reward above +1 or below -1 is cut off."""

import math


def _check_logps(policy_logps, reference_logps):
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError(
            f"{len(policy_logps)} policy tokens but {len(reference_logps)} reference tokens"
        )
    for name, seq in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in seq:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} holds {x}: not a finite log probability <= 0")


def mean_sampled_log_ratio(policy_logps, reference_logps):
    _check_logps(policy_logps, reference_logps)
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def shaped_reward(base_reward, policy_logps, reference_logps, beta):
    if not math.isfinite(base_reward):
        raise ValueError(f"base_reward {base_reward} is not finite")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError(f"beta {beta} must be finite and >= 0")
    r = base_reward - beta * mean_sampled_log_ratio(policy_logps, reference_logps)
    return max(-1.0, min(1.0, r))
