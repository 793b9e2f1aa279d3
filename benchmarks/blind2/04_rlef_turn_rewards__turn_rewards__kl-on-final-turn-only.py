"""
notebook: 04_rlef_turn_rewards
function: turn_rewards
slip: applies the reference term only on the final turn (shaped_reward = task_reward on earlier turns, as in a terminal-reward RLHF setup) instead of subtracting beta * mean_log_ratio on every turn.
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
    if len(turns) == 0:
        raise ValueError("an episode needs at least one turn")
    if len(turns) > max_turns:
        raise ValueError(f"{len(turns)} turns is more than max_turns={max_turns}")
    for t in range(len(turns) - 1):
        if turns[t].public_passed:
            raise ValueError(f"turn {t} passed the public tests but the episode continued")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    out = []
    last = len(turns) - 1
    for t, turn in enumerate(turns):
        is_final = t == last
        r = task_reward(turn, is_final)
        mlr = mean_sampled_log_ratio(turn.policy_logps, turn.reference_logps)
        shaped = r - beta * mlr if is_final else r
        out.append(TurnReward(task_reward=r, mean_log_ratio=mlr, beta=beta, shaped_reward=shaped))
    return out
