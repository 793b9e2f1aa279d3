"""Slip: uses one mean log ratio over all tokens of the whole episode (every turn's tokens
concatenated, as a trajectory-level KL) for every turn, instead of each turn's own mean log
ratio.
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
            return None  # the first Python block is never closed
    return None


def task_reward(turn: Turn, is_final: bool) -> float:
    """The task reward r_t of one turn (RLEF §2.2): +1 / -1 on the final turn, -0.2 / 0 before."""
    valid = extract_code(turn.response) is not None
    if not valid and (turn.public_passed or turn.private_passed):
        raise ValueError("inconsistent record: no valid code, but a test flag is True")
    if is_final:
        return 1.0 if (valid and turn.public_passed and turn.private_passed) else -1.0
    return 0.0 if valid else -0.2


def mean_sampled_log_ratio(policy_logps, reference_logps):
    """Mean over tokens of log π(y_i) − log π_ref(y_i) (notebook 03): fsum(p − q) / n."""
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError(f"lengths differ: {len(policy_logps)} vs {len(reference_logps)}")
    for name, seq in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in seq:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} has an entry that is not finite or is above 0: {x!r}")
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def turn_rewards(turns: list[Turn], beta: float = 0.05, max_turns: int = 3) -> list[TurnReward]:
    """Per-turn rewards of one episode, components kept separate: R_t = r_t − β · mean log ratio."""
    if len(turns) == 0:
        raise ValueError("an episode has at least one turn")
    if len(turns) > max_turns:
        raise ValueError(f"{len(turns)} turns, more than max_turns = {max_turns}")
    for t, turn in enumerate(turns[:-1]):
        if turn.public_passed:
            raise ValueError(f"turn {t} passed the public tests but the episode goes on")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError(f"beta must be finite and >= 0, got {beta!r}")
    all_policy = [x for turn in turns for x in turn.policy_logps]
    all_reference = [x for turn in turns for x in turn.reference_logps]
    for turn in turns:
        mean_sampled_log_ratio(turn.policy_logps, turn.reference_logps)  # per-turn checks
    episode_mean = mean_sampled_log_ratio(all_policy, all_reference)
    rewards = []
    for t, turn in enumerate(turns):
        r = task_reward(turn, is_final=(t == len(turns) - 1))
        rewards.append(TurnReward(r, episode_mean, beta, r - beta * episode_mean))
    return rewards
