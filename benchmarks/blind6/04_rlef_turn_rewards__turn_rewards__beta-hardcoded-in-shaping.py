"""notebook: 04_rlef_turn_rewards
function: turn_rewards
slip: records the given beta in each TurnReward but computes shaped_reward with RLEF's constant 0.05, so any other beta gives the wrong shaped rewards."""

import ast
import math
from dataclasses import dataclass

RLEF_BETA = 0.05


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


def mean_sampled_log_ratio(policy_logps, reference_logps):
    if len(policy_logps) == 0 or len(reference_logps) == 0:
        raise ValueError("empty token list")
    if len(policy_logps) != len(reference_logps):
        raise ValueError("the token lists have different lengths")
    for name, seq in (("policy_logps", policy_logps), ("reference_logps", reference_logps)):
        for x in seq:
            if not math.isfinite(x) or x > 0:
                raise ValueError(f"{name} holds {x}: not a finite log probability <= 0")
    return math.fsum(p - q for p, q in zip(policy_logps, reference_logps)) / len(policy_logps)


def extract_code(response: str) -> str | None:
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
    valid = extract_code(turn.response) is not None
    if not valid and (turn.public_passed or turn.private_passed):
        raise ValueError("a turn without valid code cannot have passed a test")
    if is_final:
        return 1.0 if (valid and turn.public_passed and turn.private_passed) else -1.0
    return 0.0 if valid else -0.2


def turn_rewards(turns: list[Turn], beta: float = 0.05, max_turns: int = 3) -> list[TurnReward]:
    if len(turns) == 0:
        raise ValueError("an episode has at least one turn")
    if len(turns) > max_turns:
        raise ValueError(f"{len(turns)} turns, more than max_turns = {max_turns}")
    if any(t.public_passed for t in turns[:-1]):
        raise ValueError("a turn follows a public pass: the episode should have ended")
    if not math.isfinite(beta) or beta < 0:
        raise ValueError("beta must be finite and >= 0")
    out = []
    for i, turn in enumerate(turns):
        r = task_reward(turn, is_final=(i == len(turns) - 1))
        m = mean_sampled_log_ratio(turn.policy_logps, turn.reference_logps)
        out.append(TurnReward(r, m, beta, r - RLEF_BETA * m))
    return out
