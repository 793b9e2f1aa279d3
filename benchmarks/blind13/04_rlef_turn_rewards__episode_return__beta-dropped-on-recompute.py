"""Slip: recomputes each turn's reward as task_reward - mean_log_ratio (the beta of the record left out) instead of summing the recorded shaped_reward."""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Turn:
    """One turn of an episode, as the environment recorded it."""

    response: str
    public_passed: bool
    private_passed: bool
    policy_logps: list[float]
    reference_logps: list[float]


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
    return math.fsum(r.task_reward - r.mean_log_ratio for r in rewards)
