"""notebook: 04_rlef_turn_rewards
function: episode_return
slip: rebuilds each turn's reward as task_reward − beta · mean_log_ratio instead of summing the records' shaped_reward, so records whose shaped_reward is not that combination give another return."""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Turn:
    """One turn of an episode, as the environment recorded it."""

    response: str  # the model's full response text
    public_passed: bool  # did the code pass the public tests?
    private_passed: bool  # did the code pass the private tests?
    policy_logps: list[float]  # log π(y_i) of each response token, length n
    reference_logps: list[float]  # log π_ref(y_i) of the same tokens, length n


@dataclass(frozen=True)
class TurnReward:
    """The components of one turn's reward, kept separate for logging."""

    task_reward: float  # r_t: +1, -1, -0.2 or 0
    mean_log_ratio: float  # mean over the turn's tokens of log π − log π_ref
    beta: float  # the coefficient of the reference term
    shaped_reward: float  # R_t = task_reward − beta · mean_log_ratio


def episode_return(rewards: list[TurnReward]) -> float:
    if len(rewards) == 0:
        raise ValueError("an episode has at least one turn")
    return math.fsum(r.task_reward - r.beta * r.mean_log_ratio for r in rewards)
