"""Slip: raises for inconsistent flags only when both public_passed and private_passed are True
(and instead of or), so a turn without valid code but with one flag set gets a reward instead of
a ValueError.
"""

import ast
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


def extract_code(response: str) -> str | None:
    """The code of the first ```python block of a response, or None when it holds no valid code."""
    if not isinstance(response, str):
        raise ValueError(f"response must be a str, got {type(response).__name__}")
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
    """The task reward r_t of one turn (RLEF 2.2): +1 / -1 on the final turn, -0.2 / 0 before."""
    valid = extract_code(turn.response) is not None
    if not valid and (turn.public_passed and turn.private_passed):
        raise ValueError("the response holds no valid code but a test flag is True")
    if is_final:
        return 1.0 if (valid and turn.public_passed and turn.private_passed) else -1.0
    return 0.0 if valid else -0.2
