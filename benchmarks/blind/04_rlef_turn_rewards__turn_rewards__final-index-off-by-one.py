"""
notebook: 04_rlef_turn_rewards
function: turn_rewards
slip: turns are enumerated from 1 but the final test is still t == len(turns) - 1, so the second-to-last turn is scored as final and the real last turn as non-final (a one-turn episode has no final turn at all).
"""

import ast
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Turn:
    response: str
    public_passed: bool
    private_passed: bool
    policy_logps: list
    reference_logps: list


@dataclass(frozen=True)
class TurnReward:
    task_reward: float
    mean_log_ratio: float
    beta: float
    shaped_reward: float


def mean_sampled_log_ratio(policy_logps, reference_logps):
    if len(policy_logps) == 0 or len(policy_logps) != len(reference_logps):
        raise ValueError("token lists must be non-empty and of equal length")
    for x in (*policy_logps, *reference_logps):
        if not math.isfinite(x) or x > 0:
            raise ValueError(f"invalid log probability {x!r}")
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


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


def task_reward(turn, is_final):
    valid = extract_code(turn.response) is not None
    if not valid and (turn.public_passed or turn.private_passed):
        raise ValueError("no valid code but a test flag is True")
    if is_final:
        return 1.0 if (valid and turn.public_passed and turn.private_passed) else -1.0
    return 0.0 if valid else -0.2


def turn_rewards(turns, beta=0.05, max_turns=3):
    """Per-turn rewards of one episode: R_t = r_t - beta * mean log ratio."""
    if len(turns) == 0:
        raise ValueError("an episode needs at least one turn")
    if len(turns) > max_turns:
        raise ValueError(f"{len(turns)} turns exceed the budget of {max_turns}")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    for k, turn in enumerate(turns[:-1]):
        if turn.public_passed:
            raise ValueError(f"turn {k} passed the public tests but the episode went on")
    out = []
    for t, turn in enumerate(turns, start=1):
        is_final = t == len(turns) - 1
        r = task_reward(turn, is_final)
        m = mean_sampled_log_ratio(turn.policy_logps, turn.reference_logps)
        out.append(
            TurnReward(task_reward=r, mean_log_ratio=m, beta=beta, shaped_reward=r - beta * m)
        )
    return out
