"""04_rlef_turn_rewards: cases and known mistakes for extract_code, task_reward, turn_rewards,
episode_return.

Turns are written ``Obj.of("Turn", ...)`` and rewards ``Obj.of("TurnReward", ...)``: the types
come from the notebook's setup cells. Each mistake is one entry: its diagnosis and its wrong
``formula``, which runs after the reference has validated the inputs (see spec.Mistake) and
reuses the reference's pieces (its extract_code, the provided mean_sampled_log_ratio and
TurnReward, through ``ns``), so that it differs in exactly the one way its diagnosis names.
"""

from __future__ import annotations

import ast
import math

import numpy as np

from autograder.spec import AssignmentSpec, Case, FunctionSpec, Mistake, Obj, Split

# -- building blocks of responses ------------------------------------------------------------

VALID = (
    "def add(a, b):\n    return a + b",
    "def running_max(xs):\n    out = []\n    for x in xs:\n        out.append(x if not out else max(out[-1], x))\n    return out",
    "xs = [i * i for i in range(5)]\nprint(sum(xs))",
    "import math\n\n\ndef area(r):\n    return math.pi * r ** 2",
    "def sign(x):\n    if x > 0:\n        return 1\n    return -1 if x < 0 else 0",
    "class Stack:\n    def __init__(self):\n        self.items = []",
)
INVALID = (
    "def add(a, b)\n    return a + b",  # missing colon
    "for i in range(3):\nprint(i)",  # IndentationError
    "return = 5",
    "xs = [1, 2,\nprint(xs)",
    "def f(:\n    pass",
    "print('unterminated)",
)
PROSE = (
    "Here is my solution.",
    "The failing test shows an off-by-one error; this version fixes it.",
    "I am not sure how to handle the empty list.",
    "Let me rewrite the loop.",
    "This should pass all tests now.",
)
OTHER_FENCES = (
    "```js\nconsole.log(1);\n```",
    "```\ndef helper():\n    return 2\n```",
    "```text\nexpected output: [1, 3, 3]\n```",
    "```py\nprint(3)\n```",
    "```bash\npython solution.py\n```",
)


def _py(code: str) -> str:
    return f"```python\n{code}\n```"


def _pick(rng: np.random.Generator, options: tuple[str, ...]) -> str:
    return options[int(rng.integers(len(options)))]


def _random_response(rng: np.random.Generator) -> str:
    """Prose, Python blocks (valid or not) and other fences in a random order."""
    parts = []
    for _ in range(int(rng.integers(1, 6))):
        kind = int(rng.integers(4))
        if kind == 0:
            parts.append(_pick(rng, PROSE))
        elif kind == 1:
            parts.append(_py(_pick(rng, VALID)))
        elif kind == 2:
            parts.append(_py(_pick(rng, INVALID)))
        else:
            parts.append(_pick(rng, OTHER_FENCES))
    return "\n".join(parts)


def _valid_response(rng: np.random.Generator) -> str:
    return _pick(rng, PROSE) + "\n" + _py(_pick(rng, VALID))


def _invalid_response(rng: np.random.Generator) -> str:
    kind = int(rng.integers(3))
    if kind == 0:
        return _pick(rng, PROSE)
    if kind == 1:
        return _pick(rng, PROSE) + "\n" + _py(_pick(rng, INVALID))
    return _pick(rng, PROSE) + "\n" + _pick(rng, OTHER_FENCES)


def _logps(rng: np.random.Generator, n: int) -> list[float]:
    return [-float(x) for x in rng.exponential(1.0, size=n)]


def _turn(response: str, public: bool, private: bool, policy, reference) -> Obj:
    return Obj.of(
        "Turn",
        response=response,
        public_passed=public,
        private_passed=private,
        policy_logps=list(policy),
        reference_logps=list(reference),
    )


def _random_turn(rng: np.random.Generator, final: bool) -> Obj:
    """A consistent turn: invalid code passes nothing; only a final turn may pass the public tests."""
    n = int(rng.integers(1, 13))
    if rng.random() < 0.7:
        response = _valid_response(rng)
        public = bool(final and rng.random() < 0.6)
        private = bool(rng.random() < 0.5)
    else:
        response, public, private = _invalid_response(rng), False, False
    return _turn(response, public, private, _logps(rng, n), _logps(rng, n))


def _random_episode(rng: np.random.Generator, max_turns: int = 3) -> list[Obj]:
    k = int(rng.integers(1, max_turns + 1))
    return [_random_turn(rng, final=(t == k - 1)) for t in range(k)]


# -- extract_code ----------------------------------------------------------------------------


def _blocks(response: str, opens) -> list[str | None]:
    """Bodies of the fenced blocks whose opening line satisfies ``opens`` (None: never closed)."""
    lines = response.split("\n")
    out: list[str | None] = []
    i = 0
    while i < len(lines):
        if not opens(lines[i].rstrip()):
            i += 1
            continue
        for j in range(i + 1, len(lines)):
            if lines[j].rstrip() == "```":
                out.append("\n".join(lines[i + 1 : j]))
                i = j + 1
                break
        else:
            out.append(None)
            break
    return out


def _is_python(line: str) -> bool:
    return line == "```python"


def _parsed(code: str | None, parse: bool = True) -> str | None:
    if code is None or not code.strip():
        return None
    if parse:
        try:
            ast.parse(code)
        except SyntaxError:
            return None
    return code


def _first_block(opens=_is_python, parse: bool = True):
    def formula(response):
        blocks = _blocks(response, opens)
        return _parsed(blocks[0], parse) if blocks else None

    return formula


def _last_block(response):
    blocks = _blocks(response, _is_python)
    return _parsed(blocks[-1]) if blocks else None


def _first_parsable(response):
    for code in _blocks(response, _is_python):
        if _parsed(code) is not None:
            return code
    return None


EXTRACT_CODE = FunctionSpec(
    "extract_code",
    cases=(
        Case(
            "single-block",
            ("Here is my fix.\n" + _py(VALID[0]) + "\nThat should work.",),
            note="one Python block between prose",
        ),
        Case("no-block", ("I do not know how to solve this.",), note="no code block: None"),
        Case(
            "syntax-error",
            (_py(INVALID[0]),),
            note="a block that ast.parse rejects (missing colon): None",
        ),
        Case(
            "indentation-error",
            ("Try this:\n" + _py(INVALID[1]),),
            note="an IndentationError is a SyntaxError too: None",
        ),
        Case(
            "first-of-two",
            (_py("a = 1") + "\nor, shorter:\n" + _py("a = 2"),),
            note="two valid blocks: the first one",
        ),
        Case(
            "no-fallback",
            (_py(INVALID[4]) + "\nOops, corrected:\n" + _py(VALID[0]),),
            note="the first block does not parse: None, even though a later one does",
        ),
        Case(
            "skips-js-fence",
            (OTHER_FENCES[0] + "\nIn Python:\n" + _py("a = 1"),),
            note="a ```js block is skipped; the Python block after it counts",
        ),
        Case(
            "bare-fence-only",
            (OTHER_FENCES[1],),
            note="a bare ``` block is not a Python block: None",
        ),
        Case(
            "py-fence-only", (OTHER_FENCES[3],), note="a ```py block is not a ```python block: None"
        ),
        Case(
            "bare-then-python",
            (OTHER_FENCES[1] + "\n" + _py(VALID[2]),),
            note="a bare ``` block before the Python block is skipped",
        ),
        Case(
            "unclosed",
            ("```python\nx = 1\ny = 2",),
            note="a block that is never closed: None",
            kind="edge",
        ),
        Case(
            "empty-block",
            ("```python\n```",),
            note="an empty block holds no code: None",
            kind="edge",
        ),
        Case(
            "blank-block",
            ("```python\n   \n\n```",),
            note="a block of blank lines holds no code: None",
            kind="edge",
        ),
        Case(
            "inline-mention",
            ("Wrap code in ```python fences, like this:\n" + _py("x = 2"),),
            note="```python in the middle of a line opens no block",
            kind="edge",
        ),
        Case(
            "trailing-spaces",
            ("```python  \nx = 3\n```   ",),
            note="trailing spaces after the fences are ignored",
            kind="edge",
        ),
        Case(
            "last-invalid",
            (_py(VALID[4]) + "\n" + _py(INVALID[2]),),
            note="a valid first block followed by an invalid one: the first",
        ),
        Case(
            "none-response",
            (None,),
            raises=ValueError,
            note="a response that is None (failed generation) raises ValueError",
        ),
        Case(
            "int-response",
            (42,),
            raises=ValueError,
            note="a response that is not a str raises ValueError",
        ),
        *[
            Case(
                f"random-{i}",
                make=lambda rng: (_random_response(rng),),
                note="a random mix of prose, Python blocks and other fences",
            )
            for i in range(12)
        ],
    ),
    mistakes=(
        Mistake(
            "no-parse-check",
            "you returned the block's text without checking that it parses: code that ast.parse rejects is not valid code (return None)",
            formula=_first_block(parse=False),
        ),
        Mistake(
            "last-block",
            "you took the last ```python block; the code is the first one",
            formula=_last_block,
        ),
        Mistake(
            "first-parsable",
            "when the first ```python block did not parse you fell back to a later one; only the first block counts, and if it does not parse the answer is None",
            formula=_first_parsable,
        ),
        Mistake(
            "no-validation",
            "a response that is not a str (None from a failed generation) must raise ValueError",
            unchecked=True,
        ),
        Mistake(
            "any-fence",
            "you accepted any fenced block (```js, a bare ```, ```py); only a line that is exactly ```python opens a Python block",
            formula=_first_block(opens=lambda line: line.startswith("```")),
        ),
    ),
)


# -- task_reward -----------------------------------------------------------------------------

CODE = _py(VALID[0])
NO_CODE = PROSE[2]
BAD_CODE = _py(INVALID[0])
ONE = ([-1.0], [-1.0])


def _task_value(
    ns, turn, is_final, *, final_invalid=-1.0, final_needs_private=True, nonfinal_needs_pass=False
) -> float:
    """The task reward with one rule changed (the defaults are the reference's rules)."""
    valid = ns["extract_code"](turn.response) is not None
    if is_final:
        if not valid:
            return final_invalid
        passed = turn.public_passed and (turn.private_passed or not final_needs_private)
        return 1.0 if passed else -1.0
    if nonfinal_needs_pass:
        return 0.0 if valid and turn.public_passed else -0.2
    return 0.0 if valid else -0.2


def _task_rule(**rule):
    return lambda turn, is_final, ns: _task_value(ns, turn, is_final, **rule)


def _task_case(
    cid: str, response: str, public: bool, private: bool, final: bool, note: str
) -> Case:
    return Case(cid, (_turn(response, public, private, *ONE), final), note=note)


def _random_task_args(rng: np.random.Generator):
    final = bool(rng.random() < 0.5)
    return _random_turn(rng, final=final), final


TASK_REWARD = FunctionSpec(
    "task_reward",
    split=Split(
        value=85,
        edge=0,
        invalid=15,
        reason="No edge cases: every case is one of the reward's branches, the rule itself",
    ),
    cases=(
        _task_case(
            "final-solved", CODE, True, True, True, "final turn, valid code, all tests passed: +1"
        ),
        _task_case(
            "final-private-failed",
            CODE,
            True,
            False,
            True,
            "final turn passing the public but not the private tests: -1",
        ),
        _task_case(
            "final-public-failed",
            CODE,
            False,
            True,
            True,
            "final turn failing the public tests: -1",
        ),
        _task_case(
            "final-all-failed", CODE, False, False, True, "final turn failing every test: -1"
        ),
        _task_case(
            "final-no-code", NO_CODE, False, False, True, "final turn without code: -1, not -0.2"
        ),
        _task_case(
            "final-syntax-error",
            BAD_CODE,
            False,
            False,
            True,
            "final turn whose code does not parse: -1",
        ),
        _task_case(
            "nonfinal-no-code", NO_CODE, False, False, False, "non-final turn without code: -0.2"
        ),
        _task_case(
            "nonfinal-syntax-error",
            BAD_CODE,
            False,
            False,
            False,
            "non-final turn whose code does not parse: -0.2",
        ),
        _task_case(
            "nonfinal-js-only",
            OTHER_FENCES[0],
            False,
            False,
            False,
            "non-final turn with only a ```js block: -0.2",
        ),
        _task_case(
            "nonfinal-valid-failed",
            CODE,
            False,
            False,
            False,
            "non-final turn, valid code failing the tests: 0",
        ),
        _task_case(
            "nonfinal-valid-private-passed",
            CODE,
            False,
            True,
            False,
            "non-final turn, valid code: 0",
        ),
        *[
            Case(f"random-{i}", make=_random_task_args, note="a random turn, final or not")
            for i in range(10)
        ],
        Case(
            "final-flags-without-code",
            (_turn(NO_CODE, True, True, *ONE), True),
            raises=ValueError,
            note="passing flags on a turn without valid code: an inconsistent record raises ValueError",
        ),
        Case(
            "public-flag-without-code",
            (_turn(BAD_CODE, True, False, *ONE), False),
            raises=ValueError,
            note="public_passed on a turn whose code does not parse raises ValueError",
        ),
        Case(
            "private-flag-without-code",
            (_turn(NO_CODE, False, True, *ONE), True),
            raises=ValueError,
            note="private_passed on a turn without code raises ValueError",
        ),
    ),
    mistakes=(
        Mistake(
            "final-minus-0.2",
            "you gave -0.2 to a final turn without valid code; the final turn is judged: anything but a full pass is -1",
            formula=_task_rule(final_invalid=-0.2),
        ),
        Mistake(
            "final-public-only",
            "you gave +1 to a final turn that passed the public tests only; the final turn must also pass the private tests",
            formula=_task_rule(final_needs_private=False),
        ),
        Mistake(
            "nonfinal-penalises-failure",
            "you gave -0.2 to a non-final turn whose valid code failed its tests; before the final turn only a turn without valid code gets -0.2",
            formula=_task_rule(nonfinal_needs_pass=True),
        ),
        Mistake(
            "flags-unchecked",
            "you returned a reward for a turn whose test flags say it passed although it holds no valid code; that record is inconsistent: raise ValueError",
            unchecked=True,
        ),
    ),
)


# -- turn_rewards ----------------------------------------------------------------------------


def _episode(*, task=None, aggregate="mean", sign=1.0, final="last"):
    """turn_rewards with one rule changed (the defaults are the reference's rules)."""

    def formula(turns, beta, max_turns, ns):
        out = []
        for t, turn in enumerate(turns):
            is_final = t == (len(turns) - 1 if final == "last" else max_turns - 1)
            r = _task_value(ns, turn, is_final, **(task or {}))
            m = ns["mean_sampled_log_ratio"](turn.policy_logps, turn.reference_logps)
            if aggregate == "sum":
                m = math.fsum(p - q for p, q in zip(turn.policy_logps, turn.reference_logps))
            shaped = r - sign * beta * m
            out.append(
                ns["TurnReward"](task_reward=r, mean_log_ratio=m, beta=beta, shaped_reward=shaped)
            )
        return out

    return formula


SOLVED = _turn(CODE, True, True, [-0.2, -0.4, -0.1], [-0.5, -0.6, -0.4])
PUBLIC_ONLY = _turn(CODE, True, False, [-1.5, -2.0, -0.5, -1.0], [-0.5, -1.0, -0.3, -0.2])
FAILED = _turn(CODE, False, False, [-1.2, -0.9, -1.5, -0.8], [-0.6, -0.7, -0.9, -0.4])
FAILED_B = _turn(_py(VALID[4]), False, True, [-0.3, -0.9], [-1.3, -0.4])
INVALID_TURN = _turn(BAD_CODE, False, False, [-1.0, -2.0, -3.0], [-1.5, -2.5, -3.5])
PROSE_TURN = _turn(
    NO_CODE, False, False, [-0.7, -0.1, -0.2, -0.4, -0.9], [-0.7, -0.6, -0.2, -0.5, -0.1]
)
STORY_FIXED = _turn(CODE, True, True, [-2.0, -4.0], [-1.0, -1.0])


def _random_episode_args(max_turns: int | None = None):
    def make(rng):
        mt = max_turns or 3
        beta = float(rng.choice([0.0, 0.05, 0.05, 0.1, 0.5, 1.0]))
        return _random_episode(rng, mt), beta, mt

    return make


TURN_REWARDS = FunctionSpec(
    "turn_rewards",
    cases=(
        Case(
            "story-invalid-then-fixed",
            ([INVALID_TURN, STORY_FIXED],),
            note="syntax error, then solved: shaped -0.225 and +1.1",
        ),
        Case("solved-first-turn", ([SOLVED],), note="solved in the first turn: one final turn, +1"),
        Case(
            "never-fixed",
            ([FAILED, FAILED_B, PUBLIC_ONLY],),
            note="three turns, the last passes the public tests only: final -1",
        ),
        Case("final-no-code", ([FAILED, PROSE_TURN],), note="a final turn without code: -1"),
        Case(
            "two-turns-solved", ([PROSE_TURN, SOLVED],), note="no code, then solved in turn 2 of 3"
        ),
        Case(
            "budget-spent",
            ([INVALID_TURN, FAILED, FAILED_B],),
            note="the budget of 3 turns spent without a pass",
        ),
        Case("beta-half", ([FAILED, PUBLIC_ONLY],), {"beta": 0.5}, note="beta = 0.5"),
        Case(
            "beta-zero",
            ([INVALID_TURN, STORY_FIXED],),
            {"beta": 0.0},
            note="beta = 0: shaped equals task reward",
            kind="edge",
        ),
        Case(
            "max-turns-5",
            ([FAILED, PROSE_TURN, INVALID_TURN, FAILED_B, SOLVED],),
            {"max_turns": 5},
            note="5 turns with max_turns = 5",
        ),
        Case(
            "max-turns-1",
            ([PUBLIC_ONLY],),
            {"max_turns": 1},
            note="a one-turn budget",
            kind="edge",
        ),
        Case(
            "single-tokens",
            ([_turn(CODE, False, False, [-0.5], [-2.0]), _turn(CODE, True, True, [-3.0], [-1.0])],),
            note="one-token responses",
        ),
        *[
            Case(
                f"random-{i}", make=_random_episode_args(), note="a random episode of 1 to 3 turns"
            )
            for i in range(10)
        ],
        *[
            Case(
                f"random-long-{i}",
                make=_random_episode_args(5),
                note="a random episode with max_turns = 5",
            )
            for i in range(3)
        ],
        Case("empty", ([],), raises=ValueError, note="an episode without turns raises ValueError"),
        Case(
            "too-many-turns",
            ([FAILED, FAILED_B, INVALID_TURN, SOLVED],),
            raises=ValueError,
            note="4 turns with max_turns = 3 raise ValueError",
        ),
        Case(
            "too-many-for-budget",
            ([FAILED, FAILED_B, SOLVED],),
            {"max_turns": 2},
            raises=ValueError,
            note="3 turns with max_turns = 2 raise ValueError",
        ),
        Case(
            "turn-after-pass",
            ([SOLVED, FAILED],),
            raises=ValueError,
            note="a turn after a public pass raises ValueError: the episode ended",
        ),
        Case(
            "turn-after-public-only-pass",
            ([FAILED, PUBLIC_ONLY, SOLVED],),
            raises=ValueError,
            note="passing the public tests ends the episode even when private tests fail",
        ),
        Case(
            "beta-negative",
            ([SOLVED],),
            {"beta": -0.05},
            raises=ValueError,
            note="a negative beta raises ValueError",
        ),
        Case(
            "beta-nan",
            ([SOLVED],),
            {"beta": float("nan")},
            raises=ValueError,
            note="beta = NaN raises ValueError",
        ),
        Case(
            "beta-inf",
            ([FAILED, SOLVED],),
            {"beta": float("inf")},
            raises=ValueError,
            note="beta = inf raises ValueError",
        ),
        Case(
            "flags-without-code",
            ([FAILED, _turn(NO_CODE, True, True, [-1.0], [-1.0])],),
            raises=ValueError,
            note="a final turn without code whose flags say it passed raises ValueError (from task_reward)",
        ),
        Case(
            "logps-unequal",
            ([_turn(CODE, True, True, [-1.0, -2.0], [-1.0])],),
            raises=ValueError,
            note="unequal log-probability lengths raise ValueError (from mean_sampled_log_ratio)",
        ),
        Case(
            "logps-positive",
            ([_turn(CODE, True, True, [0.5], [-1.0])],),
            raises=ValueError,
            note="a positive log probability raises ValueError (from mean_sampled_log_ratio)",
        ),
    ),
    mistakes=(
        Mistake(
            "final-minus-0.2",
            "you gave -0.2 to a final turn without valid code; the final turn is judged: anything but a full pass is -1",
            formula=_episode(task={"final_invalid": -0.2}),
        ),
        Mistake(
            "final-public-only",
            "your final reward looks at the public tests only; +1 needs the public and the private tests passed",
            formula=_episode(task={"final_needs_private": False}),
        ),
        Mistake(
            "final-at-max-turns",
            "you treated only turn number max_turns as final; the final turn is the last turn of the episode, which ends early at the first public pass",
            formula=_episode(final="max"),
        ),
        Mistake(
            "summed-reference",
            "you summed the token log ratios; RLEF's reference term uses their mean (the log of the geometric mean of the token probability ratios)",
            formula=_episode(aggregate="sum"),
        ),
        Mistake(
            "sign-flipped",
            "the reference term has the wrong sign: R_t = r_t - beta * mean log ratio (a positive log ratio lowers the reward)",
            formula=_episode(sign=-1.0),
        ),
        Mistake(
            "no-end-on-pass",
            "you accepted a turn after one that passed the public tests; the episode ends at the first public pass (raise ValueError)",
            unchecked=("public tests",),
        ),
        Mistake(
            "beta-unchecked",
            "an invalid beta (negative, NaN or inf) must raise ValueError",
            unchecked=("beta",),
        ),
        Mistake(
            "no-validation",
            "invalid episodes (no turns, more than max_turns, a turn after a public pass) and invalid beta must raise ValueError",
            unchecked=True,
        ),
    ),
)


# -- episode_return --------------------------------------------------------------------------


def _reward(task: float, mean: float, beta: float = 0.05) -> Obj:
    return Obj.of(
        "TurnReward",
        task_reward=task,
        mean_log_ratio=mean,
        beta=beta,
        shaped_reward=task - beta * mean,
    )


def _random_rewards(rng: np.random.Generator):
    k = int(rng.integers(1, 4))
    beta = float(rng.choice([0.05, 0.1, 0.5]))
    out = []
    for t in range(k):
        if t == k - 1:
            task = float(rng.choice([1.0, -1.0]))
        else:
            task = float(rng.choice([0.0, -0.2]))
        out.append(_reward(task, float(rng.normal(0.0, 1.0)), beta))
    return (out,)


EPISODE_RETURN = FunctionSpec(
    "episode_return",
    cases=(
        Case(
            "story",
            ([_reward(-0.2, 0.5), _reward(1.0, -2.0)],),
            note="the self-check episode: -0.225 + 1.1 = 0.875",
        ),
        Case(
            "single-turn",
            ([_reward(1.0, 0.35)],),
            note="one turn: its shaped reward",
            kind="edge",
        ),
        Case(
            "never-fixed",
            ([_reward(0.0, -0.45), _reward(0.0, -0.7), _reward(-1.0, -1.2)],),
            note="three turns, positive reference terms",
        ),
        Case(
            "invalid-twice",
            ([_reward(-0.2, 0.3, 0.5), _reward(-0.2, 0.8, 0.5), _reward(-1.0, 0.1, 0.5)],),
            note="beta = 0.5",
        ),
        *[
            Case(f"random-{i}", make=_random_rewards, note="random rewards of 1 to 3 turns")
            for i in range(8)
        ],
        Case("empty", ([],), raises=ValueError, note="an empty episode raises ValueError"),
    ),
    mistakes=(
        Mistake(
            "task-only",
            "you summed the task rewards only; the return sums the shaped rewards, reference term included",
            formula=lambda rewards: math.fsum(r.task_reward for r in rewards),
        ),
        Mistake(
            "mean-over-turns",
            "you averaged over turns; the return is the plain sum of the turns' shaped rewards",
            formula=lambda rewards: math.fsum(r.shaped_reward for r in rewards) / len(rewards),
        ),
        Mistake(
            "last-only",
            "you returned the final turn's reward only; the return sums every turn's shaped reward (no discount)",
            formula=lambda rewards: rewards[-1].shaped_reward,
        ),
        Mistake(
            "no-validation",
            "an empty list is not an episode: raise ValueError",
            unchecked=True,
        ),
    ),
)

SPEC = AssignmentSpec(
    "04_rlef_turn_rewards", (EXTRACT_CODE, TASK_REWARD, TURN_REWARDS, EPISODE_RETURN)
)
