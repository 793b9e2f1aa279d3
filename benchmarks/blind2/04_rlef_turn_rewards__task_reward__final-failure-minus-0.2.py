"""
notebook: 04_rlef_turn_rewards
function: task_reward
slip: on the final turn, valid code that fails a test gets -0.2 (the "tried but failed" reward) instead of -1; only a final turn without valid code gets -1.
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


def task_reward(turn: Turn, is_final: bool) -> float:
    valid = extract_code(turn.response) is not None
    if not valid and (turn.public_passed or turn.private_passed):
        raise ValueError("inconsistent record: no valid code but a test flag is True")
    if is_final:
        if not valid:
            return -1.0
        if turn.public_passed and turn.private_passed:
            return 1.0
        return -0.2
    if not valid:
        return -0.2
    return 0.0
