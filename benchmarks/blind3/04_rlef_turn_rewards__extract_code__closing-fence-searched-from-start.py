"""notebook: 04_rlef_turn_rewards
function: extract_code
slip: finds the closing fence with lines.index("```") from the start of the response instead of after the opening line, so an earlier bare fence (closing another language's block) ends the Python block before it begins."""

import ast
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


def extract_code(response: str) -> str | None:
    if not isinstance(response, str):
        raise ValueError(f"response must be a str, got {type(response).__name__}")
    lines = [line.rstrip() for line in response.split("\n")]
    if "```python" not in lines:
        return None
    start = lines.index("```python")
    if "```" not in lines[start + 1 :]:
        return None  # never closed
    end = lines.index("```")
    code = "\n".join(response.split("\n")[start + 1 : end])
    if not code.strip():
        return None
    try:
        ast.parse(code)
    except SyntaxError:
        return None
    return code
