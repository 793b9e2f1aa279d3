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
import re

import numpy as np

from autograder.assignments.a03_sum_vs_mean import (
    OPENRLHF_KL_COEF,
    TRL_2562,
    TRL_2854,
    _k3,
    _mean_of,
    _sum,
)
from autograder.assignments.common import until
from autograder.cases.spec import NO_SOURCE, AssignmentSpec, Case, FunctionSpec, Mistake, Obj, Split

# Sources of the known mistakes, named where more than one mistake cites them. RLEF's §2.2 (the
# reward rules) is the contract here, not a source of mistakes: nobody could open it, so the
# RLEF-specific slips are marked NO_SOURCE. The slips of the reference term (03's mean log ratio)
# share notebook 03's sources.
OPEN_R1 = "huggingface/open-r1 src/open_r1/rewards.py@0056faa"
LUNA = "papers.lunadong.com/paper/4687 (a glossary of RLEF, arXiv 2410.02089): private tests are held out and used only for the final reward"
VERIFIERS_22 = "PrimeIntellect-ai/verifiers#22: a multi-turn rollout ends when max_steps turns have occurred or as soon as an answer has been parsed"

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


# Stratified generation: each generated case has a fixed layout (which parts, in which order;
# which flags a turn has, how many turns an episode has) and draws only the contents (which
# prose, which snippets, which log probabilities, which beta). A mistake that shows only in
# some layout (a second Python block, a final turn that passed only the public tests, an
# episode shorter than max_turns) then fails the same cases for every student and every
# secret, so it costs the same points whatever the draw.

# Parts of a response: P prose, V a valid ```python block, I an invalid one, F0 … F4 the other
# fences of OTHER_FENCES (```js, a bare ```, ```text, ```py, ```bash).
LAYOUTS = (
    "P V",
    "P I",
    "V P V",
    "I V",
    "F0 V",
    "F1 P V",
    "V I",
    "F3 I P",
    "P F2 P",
    "F4 V P",
    "I P I",
    "V F0 V",
)


def _laid_out(rng: np.random.Generator, layout: str) -> str:
    """A response with the parts of ``layout``; its Python blocks are distinct snippets. It
    opens with "Attempt N:" (N random), prose that changes no extraction, so that two students'
    responses differ even where the layout leaves few choices."""
    valid = list(rng.permutation(len(VALID)))
    parts = [f"Attempt {int(rng.integers(1, 1_000_000))}:"]
    for part in layout.split():
        if part == "P":
            parts.append(_pick(rng, PROSE))
        elif part == "V":
            parts.append(_py(VALID[int(valid.pop())]))
        elif part == "I":
            parts.append(_py(_pick(rng, INVALID)))
        else:
            parts.append(OTHER_FENCES[int(part[1:])])
    return "\n".join(parts)


def _response_of(layout: str):
    return lambda rng: (_laid_out(rng, layout),)


# A turn's plan: (what the response holds, public_passed, private_passed). "valid" is prose and
# a valid Python block; the invalid responses hold no valid code and pass nothing.
INVALID_RESPONSES = {"prose": "P", "invalid-python": "P I", "other-fence": "P F2"}


def _planned_turn(rng: np.random.Generator, plan: tuple[str, bool, bool]) -> Obj:
    """A turn as ``plan`` says, with random snippets and 2 to 12 random token log probabilities
    (two or more, so a sum differs from a mean)."""
    what, public, private = plan
    response = _laid_out(rng, "P V" if what == "valid" else INVALID_RESPONSES[what])
    n = int(rng.integers(2, 13))
    return _turn(response, public, private, _logps(rng, n), _logps(rng, n))


FINAL_PLANS = (
    ("valid", True, True),
    ("valid", True, False),
    ("valid", False, True),
    ("valid", False, False),
    ("prose", False, False),
    ("invalid-python", False, False),
    ("other-fence", False, False),
)
NONFINAL_PLANS = (
    ("valid", False, False),
    ("valid", False, True),
    ("prose", False, False),
    ("invalid-python", False, False),
    ("other-fence", False, False),
)


# -- extract_code ----------------------------------------------------------------------------


def _blocks(response: str, opens, tail: bool = False) -> list[str | None]:
    """Bodies of the fenced blocks whose opening line satisfies ``opens``; a block never closed is
    None, or with ``tail`` the rest of the response."""
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
            out.append("\n".join(lines[i + 1 :]) if tail else None)
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


def _first_block(opens=_is_python, parse: bool = True, tail: bool = False):
    def formula(response):
        blocks = _blocks(response, opens, tail)
        return _parsed(blocks[0], parse) if blocks else None

    return formula


def _regex_first(response):
    """open-r1's pattern, first match: the newline before the closing fence stays in the code."""
    found = re.findall(r"```python\n(.*?)```", response, re.S)
    return _parsed(found[0]) if found else None


def _joined_blocks(response):
    closed = [b for b in _blocks(response, _is_python) if b is not None]
    return _parsed("\n".join(closed)) if closed else None


def _last_block(response):
    blocks = _blocks(response, _is_python)
    return _parsed(blocks[-1]) if blocks else None


def _first_parsable(response):
    for code in _blocks(response, _is_python):
        if _parsed(code) is not None:
            return code
    return None


def _or_empty(code: str | None) -> str:
    return "" if code is None else code


EXTRACT_CODE = FunctionSpec(
    "extract_code",
    anchors={
        "single-block": ("def add(a, b):\n    return a + b", "by hand: the block's body"),
        "no-fallback": (None, "CURRICULUM 04: the first python block, None when it does not parse"),
        "first-of-two": ("a = 1", "CURRICULUM 04: the first fenced python block"),
    },
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
            "indented-first-line",
            (_py("    x = 1\ny = 2"),),
            note="the code is the lines as they are: a first line indented by four spaces does "
            "not parse (IndentationError): None",
        ),
        Case(
            "blank-lines-kept",
            ("```python\n\nx = 1\n\n```",),
            note="the lines strictly between the fences, blank ones included: '\\nx = 1\\n'",
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
            "indented-open",
            ("Steps:\n1. Try:\n   ```python\n   x = 1\n   ```\n" + _py("y = 2"),),
            note="an indented ```python line (inside a list item) opens no block: only a line "
            "that is exactly the fence does, so the block after it counts",
            kind="edge",
        ),
        Case(
            "indented-close",
            ("```python\nx = 1\n   ```\ny = 2\n```",),
            note="an indented ``` line closes nothing: the block runs to the line that is exactly "
            "```, and that code does not parse: None",
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
                make=_response_of(layout),
                note="a random mix of prose, Python blocks and other fences",
            )
            for i, layout in enumerate(LAYOUTS)
        ],
    ),
    mistakes=(
        Mistake(
            "no-parse-check",
            "you returned the block's text without checking that it parses: code that ast.parse rejects is not valid code (return None)",
            formula=_first_block(parse=False),
            source=f"{OPEN_R1}: extract_code returns the regex match without any syntax check",
        ),
        Mistake(
            "last-block",
            "you took the last ```python block; the code is the first one",
            formula=_last_block,
            source="NVIDIA-NeMo/Gym#820: a code-RL environment graded a trailing test snippet because it took the last fenced block",
        ),
        Mistake(
            "first-parsable",
            "when the first ```python block did not parse you fell back to a later one; only the first block counts, and if it does not parse the answer is None",
            formula=_first_parsable,
            source="evalplus/evalplus evalplus/sanitize.py@04f51f1: code_extract keeps whichever span of the text passes a syntax check instead of a fixed block",
        ),
        Mistake(
            "no-validation",
            "a response that is not a str (None from a failed generation) must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
        Mistake(
            "any-fence",
            "you accepted any fenced block (```js, a bare ```, ```py); only a line that is exactly ```python opens a Python block",
            formula=_first_block(opens=lambda line: line.startswith("```")),
            source="LiveCodeBench/LiveCodeBench lcb_runner/utils/extraction_utils.py@2328565: every line containing ``` counts as a fence, whatever its language",
        ),
        Mistake(
            "regex-trailing-newline",
            'your regex (```python\\n(.*?)```) keeps the newline before the closing fence and ignores where lines start; return exactly the lines between the ```python line and the ``` line, joined with "\\n"',
            formula=_regex_first,
            source=f"{OPEN_R1}: extract_code's pattern is ```python\\n(.*?)```",
        ),
        Mistake(
            "empty-string-not-none",
            'you returned "" when there is no valid code; return None (task_reward tests extract_code(...) is not None, so "" would count as valid code)',
            formula=lambda response, ns: _or_empty(ns["extract_code"](response)),
            source=f'{OPEN_R1}: extract_code returns "" when no block matches',
        ),
        Mistake(
            "unterminated-accepted",
            "you accepted a ```python block that is never closed (a truncated answer); without a closing ``` line there is no block: return None",
            formula=_first_block(tail=True),
            source="llmsresearch/paperbanana#35: returns the rest of the response when the closing fence is missing",
        ),
        Mistake(
            "join-all-blocks",
            "you joined every ```python block into one program; the answer is the first block alone",
            formula=_joined_blocks,
            source="ganler/code-r1#6: Code-R1's reward joins all the code blocks of a response before running them",
        ),
    ),
)


# -- task_reward -----------------------------------------------------------------------------

CODE = _py(VALID[0])
NO_CODE = PROSE[2]
BAD_CODE = _py(INVALID[0])
ONE = ([-1.0], [-1.0])


def _task_value(
    ns,
    turn,
    is_final,
    *,
    final_invalid=-1.0,
    final_fail=-1.0,
    final_needs_private=True,
    partial_credit=False,
    nonfinal_invalid=-0.2,
    nonfinal_needs_pass=False,
    valid_by_fence=False,
    public_pass_final=False,
) -> float:
    """The task reward with one rule changed (the defaults are the reference's rules)."""
    if valid_by_fence:
        valid = "```python" in turn.response
    else:
        valid = ns["extract_code"](turn.response) is not None
    if is_final or (public_pass_final and turn.public_passed):
        if not valid:
            return final_invalid
        if partial_credit:  # one suite of two passed: halfway between -1 and +1
            return -1.0 + float(turn.public_passed) + float(turn.private_passed)
        passed = turn.public_passed and (turn.private_passed or not final_needs_private)
        return 1.0 if passed else final_fail
    if nonfinal_needs_pass:
        return 0.0 if valid and turn.public_passed else -0.2
    return 0.0 if valid else nonfinal_invalid


def _task_rule(**rule):
    return lambda turn, is_final, ns: _task_value(ns, turn, is_final, **rule)


def _task_case(
    cid: str, response: str, public: bool, private: bool, final: bool, note: str
) -> Case:
    return Case(cid, (_turn(response, public, private, *ONE), final), note=note)


# task_reward's non-final turns: the episodes' non-final plans, and valid code that passed the
# public tests. In an episode such a turn is always the last (the first public pass ends it), so
# NONFINAL_PLANS, which builds the turns before the final one, cannot hold it; task_reward takes
# is_final as its argument, and its docstring gives such a turn with is_final=False 0.0.
TASK_NONFINAL_PLANS = NONFINAL_PLANS + (("valid", True, True), ("valid", True, False))

# Every consistent turn once: final (7 plans) and not final (7 plans).
TASK_PLANS = tuple((plan, True) for plan in FINAL_PLANS) + tuple(
    (plan, False) for plan in TASK_NONFINAL_PLANS
)


def _task_args(plan: tuple[str, bool, bool], final: bool):
    return lambda rng: (_planned_turn(rng, plan), final)


TASK_REWARD = FunctionSpec(
    "task_reward",
    anchors={
        "final-solved": (
            1.0,
            "RLEF §2.2 (arXiv 2410.02089): +1 for a final turn passing all tests",
        ),
        "final-private-failed": (-1.0, "RLEF §2.2: -1 for a final turn failing a private test"),
        "nonfinal-no-code": (-0.2, "RLEF §2.2: -0.2 for a non-final turn without valid code"),
        "nonfinal-valid-failed": (0.0, "CURRICULUM 04: non-final turn with valid code, 0"),
        "nonfinal-all-passed": (
            0.0,
            "the notebook's docstring: task_reward(ok, is_final=False) is 0.0 for a turn that passed every test",
        ),
    },
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
        _task_case(
            "nonfinal-all-passed",
            CODE,
            True,
            True,
            False,
            "non-final turn whose valid code passed the public and private tests: 0, as the "
            "docstring's example states (is_final decides, not the test flags)",
        ),
        _task_case(
            "nonfinal-public-passed",
            CODE,
            True,
            False,
            False,
            "non-final turn whose valid code passed the public tests only: 0 (is_final decides, "
            "not the test flags)",
        ),
        *[
            Case(f"random-{i}", make=_task_args(plan, final), note="a random turn, final or not")
            for i, (plan, final) in enumerate(TASK_PLANS)
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
            source=NO_SOURCE,
        ),
        Mistake(
            "final-public-only",
            "you gave +1 to a final turn that passed the public tests only; the final turn must also pass the private tests",
            formula=_task_rule(final_needs_private=False),
            source=LUNA,
        ),
        Mistake(
            "nonfinal-penalises-failure",
            "you gave -0.2 to a non-final turn whose valid code failed its tests; before the final turn only a turn without valid code gets -0.2",
            formula=_task_rule(nonfinal_needs_pass=True),
            source=NO_SOURCE,
        ),
        Mistake(
            "flags-unchecked",
            "you returned a reward for a turn whose test flags say it passed although it holds no valid code; that record is inconsistent: raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
        Mistake(
            "pass-rate",
            "you gave partial credit on the final turn (0 for passing one of the two test suites); the final reward is binary: +1 only when the public and the private tests all pass, -1 otherwise",
            formula=_task_rule(partial_credit=True),
            source=f"{OPEN_R1}: code_reward scores a program by the fraction of test cases it passes",
        ),
        Mistake(
            "binary-01",
            "you gave 0 to a final turn that is not a full pass; RLEF's final reward is +1 or -1: failing costs -1, not 0",
            formula=_task_rule(final_invalid=0.0, final_fail=0.0),
            source='mintlify.com/rllm-org/rllm/api/rewards: rLLM\'s reward outputs are "typically 0.0 or 1.0"',
        ),
        Mistake(
            "no-invalid-penalty",
            "you gave 0 to a non-final turn without valid code; before the final turn, a turn that holds no valid code gets -0.2 (valid code gets 0)",
            formula=_task_rule(nonfinal_invalid=0.0),
            source=f"{OPEN_R1}: code_reward scores a missing or crashing program 0.0, like any failed test, with no separate penalty",
        ),
        Mistake(
            "validity-by-fence",
            "you counted any ```python fence as valid code; valid code means extract_code(turn.response) is not None (the first block, closed, and it parses)",
            formula=_task_rule(valid_by_fence=True),
            source=f"{OPEN_R1}: get_code_format_reward only checks that a ```python fenced block is present",
        ),
        Mistake(
            "public-pass-as-final",
            "you judged a non-final turn that passed the public tests as a final turn (+1 or -1); is_final decides which rule applies, not the test flags: a non-final turn with valid code gets 0 (task_reward(ok, is_final=False) is 0.0)",
            formula=_task_rule(public_pass_final=True),
            source=NO_SOURCE,
        ),
    ),
)


# -- turn_rewards ----------------------------------------------------------------------------


# 03's slips of the reference term, with 03's formulas (same arithmetic, term for term).
REFERENCE_TERMS = {
    "sum": _sum,
    "k3": _mean_of(_k3),
    "reversed": lambda p, q: _sum(q, p) / len(p),
}


def _episode(*, task=None, term="mean", sign=1.0, final="last"):
    """turn_rewards with one rule changed (the defaults are the reference's rules); ``term`` names
    how the reference term is computed from the token log probabilities (see REFERENCE_TERMS)."""

    def formula(turns, beta, max_turns, ns):
        out = []
        for t, turn in enumerate(turns):
            is_final = t == (len(turns) - 1 if final == "last" else max_turns - 1)
            r = _task_value(ns, turn, is_final, **(task or {}))
            p, q = turn.policy_logps, turn.reference_logps
            m = (
                ns["mean_sampled_log_ratio"](p, q)
                if term == "mean"
                else REFERENCE_TERMS[term](p, q)
            )
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


# Episodes by the index of their final plan in FINAL_PLANS and the non-final turns before it
# (indices into NONFINAL_PLANS); the last three with max_turns = 5.
EPISODES = (
    ((), 0),
    ((3,), 0),
    ((0, 2), 1),
    ((4,), 3),
    ((1,), 2),
    ((2, 3), 5),
    ((), 1),
    ((3, 0), 0),
    ((1,), 4),
    ((4,), 6),
)
LONG_EPISODES = (
    ((3,), 1),
    ((0, 1, 2), 0),
    ((3, 0, 4, 1), 3),
)


def _episode_args(episode: tuple[tuple[int, ...], int], max_turns: int = 3):
    """An episode as planned, with beta drawn from {0.05, 0.1, 0.5, 1} (never 0, so the
    reference term shows; beta = 0 is an edge case of its own)."""
    before, final = episode

    def make(rng):
        beta = float(rng.choice([0.05, 0.1, 0.5, 1.0]))
        turns = [_planned_turn(rng, NONFINAL_PLANS[i]) for i in before]
        return turns + [_planned_turn(rng, FINAL_PLANS[final])], beta, max_turns

    return make


TURN_REWARDS = FunctionSpec(
    "turn_rewards",
    anchors={
        # turn 1: invalid, non-final: -0.2; log ratios 0.5 each; -0.2 - 0.05·0.5
        # turn 2: final, all tests pass: +1; log ratios -1, -3: mean -2; 1 + 0.05·2
        "story-invalid-then-fixed": (
            [
                Obj.of(
                    "TurnReward",
                    task_reward=-0.2,
                    mean_log_ratio=0.5,
                    beta=0.05,
                    shaped_reward=-0.225,
                ),
                Obj.of(
                    "TurnReward", task_reward=1.0, mean_log_ratio=-2.0, beta=0.05, shaped_reward=1.1
                ),
            ],
            "by hand, RLEF §2.2 rewards",
        ),
        # final, public only: -1; log ratios -1, -1, -0.2, -0.8: mean -0.75; -1 + 0.05·0.75
        "max-turns-1": (
            [
                Obj.of(
                    "TurnReward",
                    task_reward=-1.0,
                    mean_log_ratio=-0.75,
                    beta=0.05,
                    shaped_reward=-0.9625,
                )
            ],
            "by hand, RLEF §2.2 rewards",
        ),
    },
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
                f"random-{i}", make=_episode_args(episode), note="a random episode of 1 to 3 turns"
            )
            for i, episode in enumerate(EPISODES)
        ],
        *[
            Case(
                f"random-long-{i}",
                make=_episode_args(episode, 5),
                note="a random episode with max_turns = 5",
            )
            for i, episode in enumerate(LONG_EPISODES)
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
            source=NO_SOURCE,
        ),
        Mistake(
            "final-public-only",
            "your final reward looks at the public tests only; +1 needs the public and the private tests passed",
            formula=_episode(task={"final_needs_private": False}),
            source=LUNA,
        ),
        Mistake(
            "final-at-max-turns",
            "you treated only turn number max_turns as final; the final turn is the last turn of the episode, which ends early at the first public pass",
            formula=_episode(final="max"),
            source=VERIFIERS_22,
        ),
        Mistake(
            "summed-reference",
            "you summed the token log ratios; RLEF's reference term uses their mean (the log of the geometric mean of the token probability ratios)",
            formula=_episode(term="sum"),
            source=TRL_2562,
        ),
        Mistake(
            "sign-flipped",
            "the reference term has the wrong sign: R_t = r_t - beta * mean log ratio (a positive log ratio lowers the reward)",
            formula=_episode(sign=-1.0),
            source="Unakar/Logic-RL#58: a sign bug in verl made the KL loss be maximised instead of minimised",
        ),
        Mistake(
            "no-end-on-pass",
            "you accepted a turn after one that passed the public tests; the episode ends at the first public pass (raise ValueError)",
            unchecked=("public tests",),
            source=VERIFIERS_22,
        ),
        Mistake(
            "beta-unchecked",
            "an invalid beta (negative, NaN or inf) must raise ValueError",
            unchecked=("beta",),
            source=OPENRLHF_KL_COEF,
        ),
        Mistake(
            "no-validation",
            "invalid episodes (no turns, more than max_turns, a turn after a public pass) and invalid beta must raise ValueError",
            unchecked=True,
            source=NO_SOURCE,
        ),
        Mistake(
            "k3-reference",
            "you used the k3 estimator exp(q − p) − 1 − (q − p) per token (GRPO's KL term); RLEF's reference term is the plain mean of log π − log π_ref over the turn's tokens",
            formula=_episode(term="k3"),
            source=TRL_2854,
        ),
        Mistake(
            "ratio-reversed",
            "you computed log π_ref − log π; the mean log ratio is policy over reference, mean(policy_logps − reference_logps), in the record and in the shaped reward",
            formula=_episode(term="reversed"),
            source="microsoft/KID#5: asks whether the two distributions of a KL penalty are in the wrong order relative to the paper",
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


def _far_from_discounted(rewards) -> bool:
    """The plain sum is 0.005 or more from a sum discounted by 0.99 per turn (later turns'
    rewards do not cancel), so a discount shows on every draw."""
    shaped = [r.fields["shaped_reward"] for r in rewards]
    return abs(math.fsum((1 - 0.99**t) * x for t, x in enumerate(shaped))) >= 0.005


def _random_rewards(rng: np.random.Generator):
    """Rewards of 2 or 3 turns (one turn is the single-turn case): a mean, a last turn alone or a
    discount differs from the sum on every draw (see _far_from_discounted)."""
    return until(_drawn_rewards, _far_from_discounted)(rng)


def _drawn_rewards(rng: np.random.Generator):
    k = int(rng.integers(2, 4))
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
    anchors={
        "story": (0.875, "by hand: -0.225 + 1.1, the self-check episode"),
        # shaped: -0.2 - 0.15, -0.2 - 0.4, -1 - 0.05
        "invalid-twice": (-2.0, "by hand: -0.35 - 0.6 - 1.05"),
        "single-turn": (0.9825, "by hand: 1 - 0.05 · 0.35"),
    },
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
            Case(f"random-{i}", make=_random_rewards, note="random rewards of 2 or 3 turns")
            for i in range(8)
        ],
        Case("empty", ([],), raises=ValueError, note="an empty episode raises ValueError"),
    ),
    mistakes=(
        Mistake(
            "task-only",
            "you summed the task rewards only; the return sums the shaped rewards, reference term included",
            formula=lambda rewards: math.fsum(r.task_reward for r in rewards),
            source="pytorch.org/torchtune (torchtune.modules.rlhf.get_rewards_ppo): the total reward combines the per-token KL rewards with the score",
        ),
        Mistake(
            "mean-over-turns",
            "you averaged over turns; the return is the plain sum of the turns' shaped rewards",
            formula=lambda rewards: math.fsum(r.shaped_reward for r in rewards) / len(rewards),
            source="vwxyzjn/cleanrl#125: the episodic return is the sum of the rewards obtained within an episode",
        ),
        Mistake(
            "last-only",
            "you returned the final turn's reward only; the return sums every turn's shaped reward (no discount)",
            formula=lambda rewards: rewards[-1].shaped_reward,
            source="Unity-Technologies/obstacle-tower-challenge#28: run_episode() returned the most recent reward instead of the cumulative one",
        ),
        Mistake(
            "no-validation",
            "an empty list is not an episode: raise ValueError",
            unchecked=True,
            source="NovaSky-AI/SkyRL#317: SkyRL checks that a rewards list is non-empty before aggregating it",
        ),
        Mistake(
            "discounted",
            "you discounted later turns (gamma = 0.99); RLEF uses no discount: the return is the plain sum of the shaped rewards",
            formula=lambda rewards: math.fsum(
                0.99**t * r.shaped_reward for t, r in enumerate(rewards)
            ),
            source="PrimeIntellect-ai/verifiers#536: adds gamma-discounted per-step returns for multi-turn training",
        ),
    ),
)

SPEC = AssignmentSpec(
    "04_rlef_turn_rewards", (EXTRACT_CODE, TASK_REWARD, TURN_REWARDS, EPISODE_RETURN)
)
