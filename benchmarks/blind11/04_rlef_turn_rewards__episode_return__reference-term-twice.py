"""Slip: subtracts beta * mean_log_ratio from each shaped_reward again (treats shaped_reward as if
it were still the task reward), so the reference term is counted twice instead of once.
"""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Turn:
    """One turn of an episode, as the environment recorded it."""

    response: str  # the model's full response text
    public_passed: bool  # did the code pass the public tests?
    private_passed: bool  # did the code pass the private tests?
    policy_logps: list[float]  # log pi(y_i) of each response token, length n
    reference_logps: list[float]  # log pi_ref(y_i) of the same tokens, length n


@dataclass(frozen=True)
class TurnReward:
    """The components of one turn's reward, kept separate for logging."""

    task_reward: float  # r_t: +1, -1, -0.2 or 0
    mean_log_ratio: float  # mean over the turn's tokens of log pi - log pi_ref
    beta: float  # the coefficient of the reference term
    shaped_reward: float  # R_t = task_reward - beta * mean_log_ratio


def episode_return(rewards: list[TurnReward]) -> float:
    """Undiscounted return of an episode: the sum over turns of shaped_reward."""
    if len(rewards) == 0:
        raise ValueError("an episode has at least one turn")
    return math.fsum(r.shaped_reward - r.beta * r.mean_log_ratio for r in rewards)
