"""notebook: 04_rlef_turn_rewards
function: extract_code
slip: the fence lines are compared after strip() instead of rstrip(), so an indented "  ```python" line (and an indented closing "  ```") opens and closes a block, where only a line that is exactly ```python with trailing spaces ignored should."""

import ast
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


def extract_code(response: str) -> str | None:
    """The code of the first ```python block of a response, or None when it holds no valid code."""
    if not isinstance(response, str):
        raise ValueError(f"response must be a str, got {type(response).__name__}")
    lines = response.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == "```python":
            for j in range(i + 1, len(lines)):
                if lines[j].strip() == "```":
                    code = "\n".join(lines[i + 1 : j])
                    if not code.strip():
                        return None
                    try:
                        ast.parse(code)
                    except SyntaxError:
                        return None
                    return code
            return None  # the first Python block is never closed
    return None
