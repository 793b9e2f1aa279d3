"""notebook: 04_rlef_turn_rewards
function: episode_return
slip: each turn's shaped reward is rebuilt as task_reward − 0.05 · mean_log_ratio with RLEF's default beta instead of summing the records' shaped_reward (which used the record's own beta)."""

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
    if len(rewards) == 0:
        raise ValueError("an episode has at least one turn")
    return math.fsum(r.task_reward - 0.05 * r.mean_log_ratio for r in rewards)
