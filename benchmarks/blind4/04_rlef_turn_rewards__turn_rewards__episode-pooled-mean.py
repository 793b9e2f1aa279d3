"""notebook: 04_rlef_turn_rewards
function: turn_rewards
slip: the reference term uses one mean log ratio pooled over all the episode's tokens (every turn concatenated) instead of each turn's own mean."""

import ast
import math
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
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("policy and reference token lists have different lengths")
    for name, xs in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in xs:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} has an entry that is not a log probability: {x}")
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def turn_rewards(turns: list[Turn], beta: float = 0.05, max_turns: int = 3) -> list[TurnReward]:
    if len(turns) == 0:
        raise ValueError("an episode needs at least one turn")
    if len(turns) > max_turns:
        raise ValueError(f"{len(turns)} turns, more than max_turns = {max_turns}")
    if any(turn.public_passed for turn in turns[:-1]):
        raise ValueError("a turn follows a public pass: the episode ends at the first public pass")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError(f"beta must be finite and >= 0, got {beta}")
    for turn in turns:  # each turn's lists are still checked
        mean_sampled_log_ratio(turn.policy_logps, turn.reference_logps)
    pooled = mean_sampled_log_ratio(
        [x for turn in turns for x in turn.policy_logps],
        [x for turn in turns for x in turn.reference_logps],
    )
    out = []
    for t, turn in enumerate(turns):
        r = task_reward(turn, is_final=(t == len(turns) - 1))
        out.append(TurnReward(r, pooled, beta, r - beta * pooled))
    return out
