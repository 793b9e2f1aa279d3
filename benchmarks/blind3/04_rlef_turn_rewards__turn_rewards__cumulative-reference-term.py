"""notebook: 04_rlef_turn_rewards
function: turn_rewards
slip: computes each turn's mean log ratio over all tokens of the episode so far (turns 1..t concatenated, a trajectory-level KL habit) instead of over that turn's own tokens."""

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


def extract_code(response: str) -> str | None:
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
    valid = extract_code(turn.response) is not None
    if not valid and (turn.public_passed or turn.private_passed):
        raise ValueError("a turn without valid code cannot have passed a test")
    if is_final:
        return 1.0 if (valid and turn.public_passed and turn.private_passed) else -1.0
    return 0.0 if valid else -0.2


def mean_sampled_log_ratio(policy_logps, reference_logps):
    if len(policy_logps) == 0 or len(policy_logps) != len(reference_logps):
        raise ValueError("token lists empty or of unequal lengths")
    for x in list(policy_logps) + list(reference_logps):
        if not math.isfinite(x) or x > 0:
            raise ValueError(f"{x} is not a finite log probability <= 0")
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def turn_rewards(turns: list[Turn], beta: float = 0.05, max_turns: int = 3) -> list[TurnReward]:
    if len(turns) == 0:
        raise ValueError("an episode has at least one turn")
    if len(turns) > max_turns:
        raise ValueError(f"{len(turns)} turns, more than max_turns = {max_turns}")
    for t, turn in enumerate(turns[:-1]):
        if turn.public_passed:
            raise ValueError(f"turn {t} passed the public tests, but the episode went on")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError(f"beta {beta} must be finite and >= 0")
    out, pol, ref = [], [], []
    for t, turn in enumerate(turns):
        is_final = t == len(turns) - 1
        r = task_reward(turn, is_final)
        pol += list(turn.policy_logps)
        ref += list(turn.reference_logps)
        m = mean_sampled_log_ratio(pol, ref)
        out.append(TurnReward(r, m, beta, r - beta * m))
    return out
