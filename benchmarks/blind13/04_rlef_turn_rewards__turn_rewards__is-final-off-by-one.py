"""Slip: marks the final turn with t == len(turns) (1-based thinking) while enumerating from 0, so no turn is ever treated as final: the last turn gets a non-final task reward (0 or -0.2) instead of +1/-1."""

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
        return 1.0 if (valid and turn.public_passed and turn.private_passed) else -1.0
    return 0.0 if valid else -0.2


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over tokens of log pi(y_i) - log pi_ref(y_i) (notebook 03): fsum(p - q) / n."""
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("policy_logps and reference_logps have different lengths")
    for x in list(policy_logps) + list(reference_logps):
        if not math.isfinite(x) or x > 0:
            raise ValueError(f"{x!r} is not a finite log probability <= 0")
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def turn_rewards(turns: list[Turn], beta: float = 0.05, max_turns: int = 3) -> list[TurnReward]:
    """Per-turn rewards of one episode, components kept separate: R_t = r_t - beta * mean log ratio."""
    if len(turns) == 0:
        raise ValueError("an episode needs at least one turn")
    if len(turns) > max_turns:
        raise ValueError(f"{len(turns)} turns, more than max_turns = {max_turns}")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    for turn in turns[:-1]:
        if turn.public_passed:
            raise ValueError("a turn follows a public pass: the episode should have ended")
    out = []
    for t, turn in enumerate(turns):
        is_final = t == len(turns)
        r = task_reward(turn, is_final)
        m = mean_sampled_log_ratio(turn.policy_logps, turn.reference_logps)
        out.append(TurnReward(r, m, beta, r - beta * m))
    return out
