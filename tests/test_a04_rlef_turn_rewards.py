"""Notebook 04 against episodes computed by hand from RLEF's reward, and tricky code fences."""

from __future__ import annotations

import math
import types

import pytest
from conftest import ROOT

from autograder.assignments import a04_rlef_turn_rewards as a04
from autograder.notebooks import reference

A = "04_rlef_turn_rewards"
CODE = "Here it is.\n```python\ndef add(a, b):\n    return a + b\n```"
PROSE = "I could not find the bug."
BAD = "```python\ndef add(a, b)\n    return a + b\n```"


@pytest.fixture(scope="module")
def ns():
    return reference.namespace(A, ROOT)


def _turn(ns, response, public, private, policy, ref):
    return ns["Turn"](response, public, private, list(policy), list(ref))


# -- extract_code on tricky fences -------------------------------------------------------------


@pytest.mark.parametrize(
    "response, expected",
    [
        ("```python\na = 1\n```\n```python\na = 2\n```", "a = 1"),
        ("```js\nlet a = 1;\n```\n```python\na = 1\n```", "a = 1"),
        ("```\nprint(1)\n```\n```python\nb = 2\n```", "b = 2"),
        ("Use ```python fences:\n```python\nc = 3\n```", "c = 3"),
        ("```python  \nd = 4\n```  ", "d = 4"),
        ("```python\n\ne = 5\n\n```", "\ne = 5\n"),
    ],
    ids=[
        "first-of-two",
        "after-js",
        "after-bare",
        "inline-mention",
        "trailing-spaces",
        "inner-blank-lines-kept",
    ],
)
def test_extract_code_finds_the_first_python_block(ns, response, expected):
    """Is the body of the first ```python block returned exactly, whatever surrounds it?"""
    assert ns["extract_code"](response) == expected


@pytest.mark.parametrize(
    "response",
    [
        "```python\ndef f(:\n    pass\n```\n```python\nx = 1\n```",
        "```python\nfor i in range(3):\nprint(i)\n```",
        "```py\nx = 1\n```",
        "```\nx = 1\n```",
        "```python\nx = 1\n",
        "```python\n   \n```",
        "no code at all",
    ],
    ids=[
        "no-fallback-after-syntax-error",
        "indentation-error",
        "py-fence",
        "bare-fence",
        "unclosed",
        "blank",
        "prose",
    ],
)
def test_extract_code_returns_none_without_valid_first_python_block(ns, response):
    """Is a response whose first ```python block is missing, open, blank or unparsable 'no code'?"""
    assert ns["extract_code"](response) is None


def test_extract_code_mutant_that_skips_ast_parse_accepts_a_syntax_error(ns):
    """Would skipping ast.parse really turn a syntax error into 'valid code'?"""
    mutant = next(m for m in a04.EXTRACT_CODE.mistakes if m.id == "no-parse-check").build(ns)
    assert ns["extract_code"](BAD) is None
    assert mutant(BAD) == "def add(a, b)\n    return a + b"


# -- task_reward -------------------------------------------------------------------------------


def test_task_reward_final_turn_needs_private_tests_too(ns):
    """Does passing only the public tests on the final turn give -1, not +1?"""
    assert ns["task_reward"](_turn(ns, CODE, True, False, [-1.0], [-1.0]), True) == -1.0
    assert ns["task_reward"](_turn(ns, CODE, True, True, [-1.0], [-1.0]), True) == 1.0


def test_task_reward_final_turn_without_code_is_minus_one_not_minus_0_2(ns):
    """Is -0.2 kept for non-final turns, the final turn without code getting -1?"""
    no_code = _turn(ns, PROSE, False, False, [-1.0], [-1.0])
    assert ns["task_reward"](no_code, True) == -1.0
    assert ns["task_reward"](no_code, False) == -0.2
    assert ns["task_reward"](_turn(ns, BAD, False, False, [-1.0], [-1.0]), False) == -0.2


def test_task_reward_rejects_passing_flags_without_code(ns):
    """Does a turn that 'passed' without any valid code raise instead of earning a reward?"""
    with pytest.raises(ValueError):
        ns["task_reward"](_turn(ns, PROSE, True, True, [-1.0], [-1.0]), True)


# -- turn_rewards and episode_return on hand-computed episodes ----------------------------------


def test_invalid_then_fixed_episode_matches_the_formula_by_hand(ns):
    """Do the shaped rewards equal r_t - 0.05 * mean(p - q), computed here by hand?"""
    p1, q1 = [-1.0, -2.0, -3.0], [-1.5, -2.5, -3.5]  # mean log ratio (0.5 + 0.5 + 0.5) / 3 = 0.5
    p2, q2 = [-2.0, -4.0], [-1.0, -1.0]  # mean log ratio (-1 - 3) / 2 = -2
    turns = [_turn(ns, BAD, False, False, p1, q1), _turn(ns, CODE, True, True, p2, q2)]
    out = ns["turn_rewards"](turns)
    assert [o.task_reward for o in out] == [-0.2, 1.0]
    assert [o.mean_log_ratio for o in out] == [0.5, -2.0]
    assert [o.beta for o in out] == [0.05, 0.05]
    assert math.isclose(out[0].shaped_reward, -0.225, rel_tol=1e-12)
    assert math.isclose(out[1].shaped_reward, 1.1, rel_tol=1e-12)
    assert math.isclose(ns["episode_return"](out), 0.875, rel_tol=1e-12)


def test_never_fixed_episode_is_judged_on_private_tests_at_the_end(ns):
    """Does a 3-turn episode whose last turn passes only the public tests end at -1, with no discount?"""
    logps = [
        ([-1.2, -0.9, -1.5, -0.8], [-0.6, -0.7, -0.9, -0.4]),  # mean -0.45
        ([-1.4, -1.1], [-0.5, -0.6]),  # mean -0.7
        ([-2.0, -1.0, -1.5], [-0.5, -0.5, -0.5]),  # mean -1.0
    ]
    flags = [(False, False), (False, True), (True, False)]
    turns = [_turn(ns, CODE, pub, priv, p, q) for (pub, priv), (p, q) in zip(flags, logps)]
    out = ns["turn_rewards"](turns, beta=0.1)
    expected = [0.0 + 0.1 * 0.45, 0.0 + 0.1 * 0.7, -1.0 + 0.1 * 1.0]
    assert [o.task_reward for o in out] == [0.0, 0.0, -1.0]
    for o, e in zip(out, expected):
        assert math.isclose(o.shaped_reward, e, rel_tol=1e-12)
    assert math.isclose(ns["episode_return"](out), sum(expected), rel_tol=1e-12)


def test_components_stay_separate_and_shaped_is_task_minus_beta_mean(ns):
    """Does every record keep r_t, the mean log ratio and beta, with shaped = r_t - beta * mean?"""
    turns = [
        _turn(ns, PROSE, False, False, [-0.7, -0.1, -0.2], [-0.2, -0.6, -0.9]),
        _turn(ns, CODE, False, False, [-0.3], [-1.3]),
        _turn(ns, CODE, True, True, [-0.2, -0.4], [-0.5, -0.6]),
    ]
    for beta in (0.0, 0.05, 0.7):
        for turn, o in zip(turns, ns["turn_rewards"](turns, beta=beta)):
            mean = math.fsum(p - q for p, q in zip(turn.policy_logps, turn.reference_logps)) / len(
                turn.policy_logps
            )
            assert o.mean_log_ratio == pytest.approx(mean, rel=1e-12)
            assert o.beta == beta
            assert o.shaped_reward == pytest.approx(
                o.task_reward - beta * o.mean_log_ratio, rel=1e-12, abs=1e-15
            )


def test_reference_term_is_a_mean_so_repeating_tokens_changes_nothing(ns):
    """Does the reference term stay the same when every token is repeated 8 times (mean, not sum)?"""
    once = _turn(ns, CODE, True, True, [-1.0, -3.0], [-2.0, -4.0])
    eight = _turn(ns, CODE, True, True, [-1.0, -3.0] * 8, [-2.0, -4.0] * 8)
    a, b = ns["turn_rewards"]([once])[0], ns["turn_rewards"]([eight])[0]
    assert a.mean_log_ratio == b.mean_log_ratio == 1.0
    assert a.shaped_reward == b.shaped_reward == pytest.approx(0.95, rel=1e-12)


def test_negative_log_ratio_raises_reward_without_changing_task_reward(ns):
    """Does a negative mean log ratio raise the shaped reward above r_t while r_t stays put?"""
    # mean log ratio -1.5; the final turn fails its private tests
    turn = _turn(ns, CODE, True, False, [-2.0, -2.0], [-0.5, -0.5])
    for beta in (0.05, 0.5, 1.0):
        (o,) = ns["turn_rewards"]([turn], beta=beta)
        assert o.task_reward == -1.0
        assert o.shaped_reward == pytest.approx(-1.0 + 1.5 * beta, rel=1e-12)


@pytest.mark.parametrize(
    "flags, kwargs",
    [
        ([], {}),
        ([(False, False)] * 4, {}),
        ([(False, False)] * 3, {"max_turns": 2}),
        ([(True, True), (False, False)], {}),
        ([(False, False), (True, False), (True, True)], {}),
        ([(True, True)], {"beta": -0.01}),
        ([(True, True)], {"beta": float("nan")}),
    ],
    ids=[
        "empty",
        "four-turns",
        "over-custom-budget",
        "after-pass",
        "after-public-only-pass",
        "negative-beta",
        "nan-beta",
    ],
)
def test_turn_rewards_rejects_invalid_episodes(ns, flags, kwargs):
    """Does an episode that cannot happen (or an invalid beta) raise ValueError?"""
    turns = [_turn(ns, CODE, pub, priv, [-1.0], [-1.0]) for pub, priv in flags]
    with pytest.raises(ValueError):
        ns["turn_rewards"](turns, **kwargs)


def test_final_turn_is_the_last_one_not_turn_max_turns(ns):
    """Is a one-turn episode solved at once judged as final (+1) although max_turns is 3?"""
    (o,) = ns["turn_rewards"]([_turn(ns, CODE, True, True, [-1.0], [-1.0])])
    assert o.task_reward == 1.0


def test_provided_mean_log_ratio_keeps_the_semantics_of_notebook_03(ns):
    """Does the provided helper compute fsum(p - q) / n and reject what 03 rejects?"""
    f = ns["mean_sampled_log_ratio"]
    assert f([-4.0], [-2.0]) == -2.0
    assert f([-1.0, -3.0] * 8, [-2.0, -4.0] * 8) == 1.0
    for bad in (
        ([], []),
        ([-1.0], [-1.0, -2.0]),
        ([0.5], [-1.0]),
        ([float("nan")], [-1.0]),
        ([-1.0], [float("-inf")]),
    ):
        with pytest.raises(ValueError):
            f(*bad)


def test_episode_return_is_an_undiscounted_sum(ns):
    """Is the return the plain sum of shaped rewards, every turn weighted 1?"""
    tr = ns["TurnReward"]
    rewards = [tr(-0.2, 0.3, 0.5, -0.35), tr(-0.2, 0.8, 0.5, -0.6), tr(-1.0, 0.1, 0.5, -1.05)]
    assert ns["episode_return"](rewards) == pytest.approx(-0.35 - 0.6 - 1.05, rel=1e-12)
    with pytest.raises(ValueError):
        ns["episode_return"]([])


# -- the catalogue's mistakes, as the notebook's common-mistakes table describes them ------------


def _mistake(function: str, mistake: str, ns):
    fspec = next(f for f in a04.SPEC.functions if f.name == function)
    return next(m for m in fspec.mistakes if m.id == mistake).build(ns)


def _self_check_episode(ns):
    """The notebook's "invalid then fixed" self-check: mean log ratios +0.5 and -2.0."""
    first = _turn(ns, PROSE, False, False, [-1.0, -2.0, -3.0], [-1.5, -2.5, -3.5])
    second = _turn(ns, CODE, True, True, [-2.0, -4.0], [-1.0, -1.0])
    return [first, second]


def test_open_r1_regex_keeps_the_newline_before_the_closing_fence(ns):
    """Does the regex ```python\\n(.*?)``` give the self-check's code with a trailing newline, and
    open a block on a fence in mid-line, where the reference gives the lines and None?"""
    regex = _mistake("extract_code", "regex-trailing-newline", ns)
    response = "Fixed:\n```python\nx = 1\ny = x + 1\n```"
    assert ns["extract_code"](response) == "x = 1\ny = x + 1"
    assert regex(response) == "x = 1\ny = x + 1\n"
    assert ns["extract_code"]("see ```python\nx = 1\n```") is None
    assert regex("see ```python\nx = 1\n```") == "x = 1\n"


def test_empty_string_for_no_code_makes_task_reward_count_it_as_valid_code(ns):
    """With an extract_code that returns "" for no code, does task_reward give a non-final turn
    without code 0 instead of -0.2, as the notebook's table says?"""
    empty = _mistake("extract_code", "empty-string-not-none", ns)
    assert empty(PROSE) == "" and empty(CODE) == ns["extract_code"](CODE)
    with_empty = dict(ns, extract_code=empty)
    task_reward = types.FunctionType(ns["task_reward"].__code__, with_empty)
    no_code = _turn(ns, PROSE, False, False, [-1.0], [-1.0])
    assert ns["task_reward"](no_code, False) == -0.2
    assert task_reward(no_code, False) == 0.0


@pytest.mark.parametrize(
    "mistake, response, quoted",
    [
        (
            "unterminated-accepted",
            "Truncated:\n```python\ndef f(x):\n    return x",
            "def f(x):\n    return x",
        ),
        (
            "join-all-blocks",
            "```python\na = 1\n```\nor maybe\n```python\na = 2\n```",
            "a = 1\na = 2",
        ),
    ],
)
def test_extract_code_mistakes_give_what_the_table_says(ns, mistake, response, quoted):
    """Does an unclosed block or a second block change the answer exactly as the table says?"""
    assert _mistake("extract_code", mistake, ns)(response) == quoted
    assert ns["extract_code"](response) != quoted


@pytest.mark.parametrize(
    "mistake, response, public, private, final, quoted",
    [
        ("pass-rate", CODE, True, False, True, 0.0),
        ("binary-01", CODE, False, False, True, 0.0),
        ("binary-01", PROSE, False, False, True, 0.0),
        ("no-invalid-penalty", PROSE, False, False, False, 0.0),
        ("validity-by-fence", BAD, False, False, False, 0.0),
    ],
)
def test_task_reward_mistakes_give_what_the_table_says(
    ns, mistake, response, public, private, final, quoted
):
    """Does each new task_reward mistake give 0 where the rules give -1 or -0.2?"""
    turn = _turn(ns, response, public, private, [-1.0], [-1.0])
    assert _mistake("task_reward", mistake, ns)(turn, final) == quoted
    assert ns["task_reward"](turn, final) in (-1.0, -0.2)


@pytest.mark.parametrize(
    "mistake, means, shaped",
    [
        ("k3-reference", [0.107, 8.402], [-0.205, 0.580]),
        ("ratio-reversed", [-0.5, 2.0], [-0.175, 0.9]),
    ],
)
def test_reference_term_mistakes_give_what_the_table_says(ns, mistake, means, shaped):
    """On the self-check episode, are the records' reference terms and shaped rewards the
    table's numbers (to the digits quoted)?"""
    out = _mistake("turn_rewards", mistake, ns)(_self_check_episode(ns), 0.05, 3)
    assert [o.mean_log_ratio for o in out] == pytest.approx(means, abs=0.0005)
    assert [o.shaped_reward for o in out] == pytest.approx(shaped, abs=0.0005)
    assert [o.task_reward for o in out] == [-0.2, 1.0]


def test_a_discounted_return_is_0_864_for_the_self_check(ns):
    """With gamma = 0.99, is the self-check's return -0.225 + 0.99 * 1.1 = 0.864, not 0.875?"""
    rewards = ns["turn_rewards"](_self_check_episode(ns))
    assert _mistake("episode_return", "discounted", ns)(rewards) == pytest.approx(0.864, rel=1e-12)
    assert ns["episode_return"](rewards) == pytest.approx(0.875, rel=1e-12)


def test_a_public_pass_judged_as_final_loses_points_and_is_named():
    """task_reward that treats a turn which passed the public tests as final ("a public pass
    ends the episode") gives the docstring's ok turn +1 with is_final=False, where the text
    states 0.0. It kept full marks while no case held a non-final turn with public_passed; is
    it now below full marks, with public-pass-as-final named in its feedback?"""
    from autograder.scoring import evaluate, kernel

    ns = reference.namespace(A, ROOT)

    def task_reward(turn, is_final):
        valid = ns["extract_code"](turn.response) is not None
        if not valid and (turn.public_passed or turn.private_passed):
            raise ValueError("inconsistent record")
        if is_final or turn.public_passed:
            return 1.0 if (valid and turn.public_passed and turn.private_passed) else -1.0
        return 0.0 if valid else -0.2

    ok = _turn(ns, "```python\nx = 1\n```", True, True, [-1.0], [-1.0])
    assert ns["task_reward"](ok, False) == 0.0 and task_reward(ok, False) == 1.0
    r = kernel.grade_function(A, "task_reward", task_reward, namespace=ns, root=ROOT)
    text = evaluate.feedback_text(r)
    assert r.score < r.points, text
    assert r.mistake == "public-pass-as-final", text
    diagnosis = next(
        m.diagnosis for m in a04.TASK_REWARD.mistakes if m.id == "public-pass-as-final"
    )
    assert "Recognised mistake: " + diagnosis in text, text
    reference_result = kernel.grade_function(
        A, "task_reward", ns["task_reward"], namespace=ns, root=ROOT
    )
    assert reference_result.score == reference_result.points
