"""notebook: 04_rlef_turn_rewards
function: episode_return
slip: sums the undiscounted returns-to-go of every turn (sum over t of R_t + ... + R_last, as in a REINFORCE loss) instead of the shaped rewards once each."""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Turn:
    response: str
    public_passed: bool
    private_passed: bool
    policy_logps: list[float]
    reference_logps: list[float]


@dataclass(frozen=True)
class TurnReward:
    task_reward: float
    mean_log_ratio: float
    beta: float
    shaped_reward: float


def episode_return(rewards: list[TurnReward]) -> float:
    if len(rewards) == 0:
        raise ValueError("an episode has at least one turn")
    shaped = [r.shaped_reward for r in rewards]
    return math.fsum(math.fsum(shaped[t:]) for t in range(len(shaped)))
