"""Slip: the sum starts at the second record (rewards[1:]), so the first turn's shaped reward is left out of the return, instead of summing every turn."""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class TurnReward:
    """The components of one turn's reward, kept separate for logging."""

    task_reward: float
    mean_log_ratio: float
    beta: float
    shaped_reward: float


def episode_return(rewards: list[TurnReward]) -> float:
    """Undiscounted return of an episode: the sum over turns of shaped_reward."""
    if len(rewards) == 0:
        raise ValueError("an episode has at least one turn")
    if len(rewards) == 1:
        return rewards[0].shaped_reward
    return math.fsum(r.shaped_reward for r in rewards[1:])
