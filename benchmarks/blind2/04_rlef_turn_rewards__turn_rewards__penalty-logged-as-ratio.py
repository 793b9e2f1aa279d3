"""
notebook: 04_rlef_turn_rewards
function: turn_rewards
slip: stores the beta-scaled penalty beta * mean in the record's mean_log_ratio field instead of the mean log ratio itself (shaped_reward is still computed right).
"""

import ast
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


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Correct callee (notebook 03): fsum(p - q) / n with its checks."""
    if len(policy_logps) == 0 or len(policy_logps) != len(reference_logps):
        raise ValueError("token lists must be non-empty and of equal length")
    for x in list(policy_logps) + list(reference_logps):
        if not math.isfinite(x) or x > 0:
            raise ValueError(f"invalid log probability {x}")
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def extract_code(response):
    """Correct callee, from the notebook's text."""
    if not isinstance(response, str):
        raise ValueError("response must be a str")
    lines = response.split("\n")
    for i, line in enumerate(lines):
        if line.rstrip() == "```python":
            for j in range(i + 1, len(lines)):
                if lines[j].rstrip() == "```":
                    code = "\n".join(lines[i + 1 : j])
                    if not code.strip():
                        return None
                    try:
                        ast.parse(code)
                    except SyntaxError:
                        return None
                    return code
            return None
    return None


def task_reward(turn, is_final):
    """Correct callee, from the notebook's text."""
    valid = extract_code(turn.response) is not None
    if not valid and (turn.public_passed or turn.private_passed):
        raise ValueError("a turn without valid code cannot have passed tests")
    if is_final:
        return 1.0 if (valid and turn.public_passed and turn.private_passed) else -1.0
    return 0.0 if valid else -0.2


def turn_rewards(turns: list[Turn], beta: float = 0.05, max_turns: int = 3) -> list[TurnReward]:
    if not turns:
        raise ValueError("no turns")
    if len(turns) > max_turns:
        raise ValueError("too many turns")
    if any(turn.public_passed for turn in turns[:-1]):
        raise ValueError("a turn follows a public pass")
    if not (math.isfinite(beta) and beta >= 0):
        raise ValueError("invalid beta")
    rewards = []
    for i, turn in enumerate(turns):
        r_t = task_reward(turn, is_final=(i == len(turns) - 1))
        kl_term = beta * mean_sampled_log_ratio(turn.policy_logps, turn.reference_logps)
        rewards.append(TurnReward(r_t, kl_term, beta, r_t - kl_term))
    return rewards
