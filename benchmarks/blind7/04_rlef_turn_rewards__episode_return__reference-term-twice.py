"""Slip: the return sums shaped_reward − beta·mean_log_ratio over the turns, subtracting the
reference term a second time (as if shaped_reward held only the task reward), instead of the plain
sum of shaped_reward."""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class TurnReward:
    """The components of one turn's reward, kept separate for logging."""

    task_reward: float  # r_t: +1, -1, -0.2 or 0
    mean_log_ratio: float  # mean over the turn's tokens of log π − log π_ref
    beta: float  # the coefficient of the reference term
    shaped_reward: float  # R_t = task_reward − beta · mean_log_ratio


def episode_return(rewards: list[TurnReward]) -> float:
    """Undiscounted return of an episode: the sum over turns of shaped_reward."""
    if len(rewards) == 0:
        raise ValueError("an episode has at least one turn")
    return math.fsum(r.shaped_reward - r.beta * r.mean_log_ratio for r in rewards)
