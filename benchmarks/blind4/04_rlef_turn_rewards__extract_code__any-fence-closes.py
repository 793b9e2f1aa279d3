"""notebook: 04_rlef_turn_rewards
function: extract_code
slip: the block closes at the next line that starts with ``` (e.g. ```text) instead of the next line that is exactly ```."""

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
    if not isinstance(response, str):
        raise ValueError(f"response must be a str, got {type(response).__name__}")
    lines = response.split("\n")
    for i, line in enumerate(lines):
        if line.rstrip() == "```python":
            for j in range(i + 1, len(lines)):
                if lines[j].startswith("```"):
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
