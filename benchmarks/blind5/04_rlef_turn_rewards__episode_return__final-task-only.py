"""notebook: 04_rlef_turn_rewards
function: episode_return
slip: the return is the final turn's task reward plus every turn's reference term (the intermediate task rewards such as −0.2 are dropped as "shaping"), instead of the plain sum of the shaped rewards."""

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
    """Undiscounted return of an episode: the sum over turns of shaped_reward."""
    if len(rewards) == 0:
        raise ValueError("an episode has at least one turn")
    reference_terms = [r.shaped_reward - r.task_reward for r in rewards]
    return math.fsum([rewards[-1].task_reward, *reference_terms])
