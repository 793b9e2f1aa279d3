"""Slip: marks a turn final when t == len(turns) (enumerate index compared with the length, not
length - 1), so no turn is ever final and the last turn gets the non-final reward 0 / -0.2
instead of +1 / -1.
"""

import ast
import math
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
    if not valid and (turn.public_passed or turn.private_passed):
        raise ValueError("the response holds no valid code but a test flag is True")
    if is_final:
        return 1.0 if (valid and turn.public_passed and turn.private_passed) else -1.0
    return 0.0 if valid else -0.2


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over tokens of log pi(y_i) - log pi_ref(y_i) (notebook 03): fsum(p - q) / n."""
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError(f"lengths differ: {len(policy_logps)} vs {len(reference_logps)}")
    for name, seq in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in seq:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} has an entry that is not finite or above 0: {x}")
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def turn_rewards(turns: list[Turn], beta: float = 0.05, max_turns: int = 3) -> list[TurnReward]:
    """Per-turn rewards of one episode, components kept separate: R_t = r_t - beta * mean log ratio."""
    if len(turns) == 0:
        raise ValueError("an episode needs at least one turn")
    if len(turns) > max_turns:
        raise ValueError(f"{len(turns)} turns, more than max_turns = {max_turns}")
    for t in range(len(turns) - 1):
        if turns[t].public_passed:
            raise ValueError(f"turn {t + 1} passed the public tests, but the episode goes on")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError(f"beta must be finite and >= 0, got {beta}")
    out = []
    for t, turn in enumerate(turns):
        is_final = t == len(turns)
        r = task_reward(turn, is_final)
        mean = mean_sampled_log_ratio(turn.policy_logps, turn.reference_logps)
        out.append(TurnReward(r, mean, beta, r - beta * mean))
    return out
