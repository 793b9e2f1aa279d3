"""Slip: discounts later turns with gamma = 0.99 (a PPO default) instead of the plain undiscounted
sum of shaped rewards that RLEF uses."""

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
    gamma = 0.99
    return math.fsum(gamma**t * r.shaped_reward for t, r in enumerate(rewards))
