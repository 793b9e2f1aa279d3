"""
notebook: 04_rlef_turn_rewards
function: task_reward
slip: the final turn gets +1 when its code is valid and private_passed is True, without requiring public_passed (the private tests are assumed to cover the public ones).
"""

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Turn:
    response: str
    public_passed: bool
    private_passed: bool
    policy_logps: list
    reference_logps: list


def extract_code(response):
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
    """The task reward r_t of one turn (RLEF 2.2)."""
    valid = extract_code(turn.response) is not None
    if not valid and (turn.public_passed or turn.private_passed):
        raise ValueError("inconsistent turn: no valid code but a test flag is True")
    if is_final:
        # the private tests are the held-out judge of the final answer
        return 1.0 if (valid and turn.private_passed) else -1.0
    return 0.0 if valid else -0.2
