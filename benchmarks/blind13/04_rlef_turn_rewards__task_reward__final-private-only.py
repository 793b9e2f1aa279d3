"""Slip: on the final turn it gives +1 when the code is valid and the private tests pass, without also requiring public_passed, so code that fails the public tests but passes the private ones gets +1 instead of -1."""

import ast
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


def extract_code(response: str) -> str | None:
    """The code of the first ```python block of a response, or None when it holds no valid code."""
    if not isinstance(response, str):
        raise ValueError("response must be a str")  # noqa: TRY004 (the contract asks for ValueError)
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
    """The task reward r_t of one turn (RLEF 2.2)."""
    valid = extract_code(turn.response) is not None
    if not valid and (turn.public_passed or turn.private_passed):
        raise ValueError("a turn without valid code cannot have passed a test")
    if is_final:
        return 1.0 if (valid and turn.private_passed) else -1.0
    return 0.0 if valid else -0.2
