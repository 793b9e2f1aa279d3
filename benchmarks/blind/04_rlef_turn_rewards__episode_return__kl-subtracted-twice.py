"""
notebook: 04_rlef_turn_rewards
function: episode_return
slip: subtracts beta * mean_log_ratio again from each turn's shaped_reward (the reference term is counted twice), instead of summing shaped_reward as it is.
"""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class TurnReward:
    task_reward: float
    mean_log_ratio: float
    beta: float
    shaped_reward: float


def episode_return(rewards):
    """Undiscounted return of an episode, the KL-regularised sum over turns."""
    if len(rewards) == 0:
        raise ValueError("an episode has at least one turn")
    # return = sum of rewards minus the KL penalty of every turn
    return math.fsum(r.shaped_reward - r.beta * r.mean_log_ratio for r in rewards)
