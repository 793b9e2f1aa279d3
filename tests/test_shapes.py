"""Error shapes on synthetic outcomes: is each one named, with its factor or offset, only when it
holds on every failing case, and is nothing named when it holds on some cases only?"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import ROOT

from autograder.cases.codec import encode
from autograder.notebooks import reference
from autograder.scoring import evaluate, kernel, shapes

RTOL, ATOL = 1e-9, 1e-12


def _case(args, expected, got, rtol=RTOL, atol=ATOL):
    """(inputs, expected outcome, learner's outcome, rtol, atol) from plain values."""
    out = {"value": encode(got)} if not isinstance(got, dict) else got
    return (
        {"args": encode(list(args)), "kwargs": {"$dict": {}}},
        {"value": encode(expected)},
        out,
        rtol,
        atol,
    )


def _find(cases, names=()):
    return shapes.find_shape(cases, names)


RNG = np.random.default_rng(0)
A = RNG.normal(size=5)
B = RNG.normal(size=(3, 4))


def test_constant_factor_two_is_named_with_its_value():
    """Every value doubled, on every failing case: a factor 2?"""
    s = _find([_case([A], A, 2 * A), _case([B], B, 2 * B)])
    assert s.id == "factor" and "2×" in s.text and "factor 2" in s.text


@pytest.mark.parametrize(
    "factor,words",
    [(1 / math.log(2), "log base 2"), (1 / math.log(10), "log base 10"), (0.5, "½")],
)
def test_factor_of_a_log_base_is_named(factor, words):
    """A factor 1/ln 2 or 1/ln 10 (log2 or log10 for ln), or ½: named, with what to change?"""
    s = _find([_case([A], A, factor * A), _case([B], B.ravel(), factor * B.ravel())])
    assert s.id == "factor" and words in s.text


def test_factor_equal_to_the_length_says_sum_where_mean_was_expected():
    """Each case off by its input's length (3, 5, 7): a sum where the formula averages?"""
    cases = []
    for n in (3, 5, 7):
        x = list(RNG.normal(size=n))
        mean = float(np.mean(x))
        cases.append(_case([x, x], mean, mean * n))
    s = _find(cases, ["policy_logps", "reference_logps"])
    assert s.id == "factor" and "summed" in s.text and "`policy_logps`" in s.text
    assert "3, 5, 7" in s.text


def test_factor_one_over_the_length_says_mean_where_sum_was_expected():
    """Each case divided by its batch size: averaged where the formula sums?"""
    cases = []
    for b in (2, 4):
        x = RNG.normal(size=(b, 3))
        total = x.sum(axis=0)
        cases.append(_case([x], total, total / b))
    s = _find(cases)
    assert s.id == "factor" and "averaged" in s.text and "axis 0 of argument 1" in s.text


def test_factor_equal_to_the_valid_count_of_each_mask_row():
    """Each row's value times the number of 1s in its mask row: a sum over valid tokens?"""
    values = RNG.normal(size=(3, 4))
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 0, 0]])
    means = (values * mask).sum(1) / mask.sum(1)
    s = _find([_case([values, mask], means, means * mask.sum(1))], ["values", "mask"])
    assert s.id == "factor" and "`mask`" in s.text and "summed" in s.text


def test_a_sum_over_a_count_that_changes_per_check_is_a_count_ratio():
    """A mean taken over the wrong count (the floor's sum over the correct responses divided by
    the batch size: n_correct / B, another ratio on each check) is named as a factor, when
    generated checks show it."""
    cases, hidden = [], []
    for n, b in ((3, 4), (1, 4), (3, 6), (8, 11), (29, 40)):
        expected = float(RNG.uniform(0.1, 2.0))
        cases.append(_case([], expected, expected * n / b, rtol=1e-5, atol=1e-6))
        hidden.append(b > 4)
    found = shapes.find_shape(cases, (), hidden)
    assert found is not None and found.id == "factor", found
    assert "ratio of whole numbers" in found.text and "wrong count" in found.text


def test_two_shares_of_the_same_entries_are_a_wrong_count_not_a_wrong_division():
    """An LLD rate counting change <= -eps where change <= eps belongs: its value and the
    expected one are both k / n over the same n changes, so their ratio is always a ratio of
    whole numbers, and "check what you divide by" was untrue (the division is right). The
    line says the count is wrong instead."""
    cases, hidden = [], []
    for changes, want, got in (
        ([-0.5, 0.25, 0.25, 1.0], 0.75, 0.25),
        ([-0.25, -0.0625, 0.5], 1 / 3, 2 / 3),
        ([0.1, -0.3, 0.2, -0.1, 0.0], 0.6, 0.4),
        ([0.1, -0.3, 0.2, -0.1, 0.0, 0.5, -0.2], 4 / 7, 3 / 7),
    ):
        cases.append(_case([np.array(changes)], want, got, rtol=1e-5, atol=1e-6))
        hidden.append(len(changes) > 4)
    found = shapes.find_shape(cases, ("changes",), hidden)
    assert found is not None and found.id == "count", found
    assert "which entries count" in found.text and "`changes`" in found.text, found.text
    assert "what you divide by" not in found.text, found.text
    # a mean over the wrong count (values not shares of one input's length) keeps its line
    wrong_count = [_case([np.arange(4.0)], 1.4, 1.4 * 3 / 4, 1e-5, 1e-6)] + [
        _case([np.arange(6.0)], 2.2, 2.2 * k / 6, 1e-5, 1e-6) for k in (1, 5)
    ]
    other = shapes.find_shape(wrong_count, ("x",), [False, True, True])
    assert other is None or other.id != "count", other


def test_count_ratios_on_hand_written_checks_only_are_no_evidence():
    """1 + p where 1 − p belongs, with p = 0.5 and −0.5 written by hand, gives the ratios 3 and
    1 / 3: whole numbers by coincidence, not a count. Nothing is named."""
    cases = [
        _case([], [1.0, 0.5, 1.5, 1.0], [1.0, 1.5, 1.5, 1.0], rtol=1e-5, atol=1e-6),
        _case([], [1.0, 1.5, 0.5, 1.0], [1.0, 0.5, 0.5, 1.0], rtol=1e-5, atol=1e-6),
    ]
    assert shapes.find_shape(cases, (), [False, False]) is None
    # and on generated checks, two ratios within one check are not one count per check
    mixed = [_case([], [1.0, 0.5, 0.25], [3.0, 1.5, 0.5], rtol=1e-5, atol=1e-6)] * 3
    found = shapes.find_shape(mixed, (), [True] * 3)
    assert found is None or "ratio of whole numbers" not in found.text, found


def _mask_case(thr, dominant, expected, got):
    return (
        {
            "args": encode([np.array(thr), np.array(dominant, dtype=bool)]),
            "kwargs": {"$dict": {}},
        },
        {"value": encode(np.array(expected))},
        {"value": encode(np.array(got))},
        1e-5,
        1e-6,
    )


def test_values_that_differ_exactly_where_a_sign_rule_holds_name_it():
    """1 + p where THR ≤ 0 on dominant tokens: the entries that differ follow a rule of two
    inputs, and the line names both."""
    cases = [
        _mask_case([2.0, -0.5, 0.0, 3.0], [1, 1, 1, 0], [1.5, 0.5, 1.0, 1.0], [1.5, 1.5, 1.5, 1]),
        _mask_case([-1.0, 0.7, -2.0, 1.0], [1, 1, 0, 1], [0.5, 1.5, 1.0, 1.5], [1.5, 1.5, 1, 1.5]),
    ]
    found = shapes.where_differs(cases, ["thr", "dominant"])
    assert found is not None and found.id == "which-entries", found
    assert "`thr` ≤ 0 and `dominant` is True" in found.text


def test_a_sign_rule_wider_than_the_entries_that_differ_is_not_named():
    """Entries that differ inside "> 0" but not all of it (a threshold's selection): no rule."""
    cases = [
        _mask_case([2.0, 0.5, -1.0, 3.0], [1, 1, 1, 1], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1, 0.0]),
        _mask_case([0.2, 4.0, -1.0, 5.0], [1, 1, 1, 1], [1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 1, 0.0]),
    ]
    assert shapes.where_differs(cases, ["neg", "mask"]) is None


def test_values_clamped_at_a_constant_are_named_as_a_clamp():
    """The log ratio clipped to [0, 1] where max(0, ·) belongs: every expected value above 1 is
    1 in the learner's, the others right."""
    e1, e2 = np.array([0.0, 0.4, 2.5, 1.7]), np.array([3.0, 0.2, 0.0, 0.9])
    cases = [
        _case([], e1, np.minimum(e1, 1.0), rtol=1e-5, atol=1e-6),
        _case([], e2, np.minimum(e2, 1.0), rtol=1e-5, atol=1e-6),
    ]
    found = _find(cases)
    assert found is not None and found.id == "clamped", found
    assert "clamped at 1" in found.text and "above" in found.text


def test_a_result_wrong_at_one_position_on_every_check_says_which():
    """(mean, E[v²]) for (mean, variance): the second value differs on every check, the first
    is right."""
    cases = [
        _mask_case([0.1, 0.2], [1, 0], [0.5, 0.25], [0.5, 0.5]),
        _mask_case([0.3, 0.2], [1, 1], [0.2, 0.16], [0.2, 0.2]),
    ]
    found = shapes.where_differs(cases, ["p", "q"])
    assert found is not None and "index 1)" in found.text, found


def test_constant_offset_is_named_with_its_value():
    s = _find([_case([A], A, A + 1.0), _case([B], B, B + 1.0)])
    assert s.id == "offset" and "+1" in s.text


def test_the_same_number_whatever_the_inputs():
    s = _find([_case([A], A, np.zeros(5)), _case([B], 0.5, 0.0)])
    assert s.id == "constant" and "0 on every failing check" in s.text


def test_sign_flip():
    s = _find([_case([A], A, -A)])
    assert s.id == "sign"


def test_reciprocal():
    x = np.array([0.5, 2.0, 4.0, -3.0])
    s = _find([_case([x], x, 1 / x)])
    assert s.id == "reciprocal"


def test_transposed_output_of_another_shape():
    s = _find([_case([B], B, B.T)])
    assert s.id == "transposed"


def test_transposed_square_output():
    sq = RNG.normal(size=(3, 3))
    s = _find([_case([sq], sq, sq.T)])
    assert s.id == "transposed"


def test_values_in_reverse_order_are_a_permutation():
    s = _find([_case([A], A, A[::-1])])
    assert s.id == "permuted" and "reverse" in s.text


def test_values_in_another_order_are_a_permutation():
    perm = A[[2, 0, 4, 1, 3]]
    s = _find([_case([A], A, perm)])
    assert s.id == "permuted" and "another order" in s.text


def test_shift_by_one_position():
    """got[i] = expected[i + 1] (the last position anything): shifted by one along axis 0?"""
    got = np.append(A[1:], 7.0)
    s = _find([_case([A], A, got)])
    assert s.id == "shifted" and "axis 0" in s.text


def test_reduction_over_the_wrong_axis():
    """The sum over axis 1 where the sum over axis 0 was expected?"""
    s = _find([_case([B], B.sum(axis=0), B.sum(axis=1))])
    assert s.id == "wrong-axis" and "over axis 1" in s.text and "axis 0" in s.text


def test_extra_axis_of_length_one_is_keepdim():
    s = _find([_case([B], B.sum(axis=1), B.sum(axis=1, keepdims=True))])
    assert s.id == "keepdim"


def test_other_wrong_shape_names_the_input_dimensions():
    h_a, h_b = RNG.normal(size=(5, 2)), RNG.normal(size=(7, 2))
    s = _find([_case([h_a, h_b], np.zeros(5) + 1, np.zeros(7) + 1)], ["h_a", "h_b"])
    assert s.id == "wrong-shape" and "(7,)" in s.text and "(5,)" in s.text
    assert "`h_a`" in s.text and "`h_b`" in s.text


def test_nan_where_a_finite_value_was_expected():
    got = A.copy()
    got[2] = np.nan
    s = _find([_case([A], A, got), _case([A], 1.5, float("nan"))])
    assert s.id == "nan"


def test_inf_where_a_finite_value_was_expected():
    s = _find([_case([A], 0.25, float("inf")), _case([A], 1.0, float("-inf"))])
    assert s.id == "inf"


def test_none_returned_where_a_number_was_expected():
    s = _find([_case([A], 0.5, None), _case([A], [1.0, 2.0], None)])
    assert s.id == "wrong-type" and "return" in s.text


def test_same_exception_on_every_valid_input():
    raised = {"raised": "ZeroDivisionError", "message": "division by zero"}
    s = _find([_case([A], 0.5, raised), _case([B], 1.0, raised)])
    assert s.id == "raised" and "ZeroDivisionError" in s.text


@pytest.mark.parametrize(
    "second",
    [
        lambda x: 3 * x,  # another factor
        lambda x: x + 1.0,  # an offset instead of the factor
        lambda x: -x,  # a sign flip
        lambda x: x[::-1],  # a permutation
    ],
)
def test_factor_on_some_cases_only_names_nothing(second):
    """A factor 2 on one failing case and something else on the other: no shape, rather than a guess?"""
    assert _find([_case([A], A, 2 * A), _case([A], A, second(A))]) is None


def test_nan_on_some_cases_only_names_nothing():
    got = A.copy()
    got[0] = np.nan
    assert _find([_case([A], A, got), _case([A], A, 2 * A)]) is None


def test_raised_on_some_cases_only_names_nothing():
    raised = {"raised": "TypeError", "message": "x"}
    assert _find([_case([A], A, raised), _case([A], A, 2 * A)]) is None


def test_one_scalar_cannot_tell_a_factor_from_an_offset():
    """One failing number (0.3 for 0.1): a factor 3, an offset 0.2...? Nothing is named."""
    assert _find([_case([A], 0.1, 0.3)]) is None


def test_unrelated_values_name_nothing():
    assert (
        _find([_case([A], A, RNG.normal(size=5)), _case([B], B, RNG.normal(size=(3, 4)))]) is None
    )


def test_uncatalogued_change_in_bits_is_named_as_a_log_base():
    """likelihood_change reported in bits (divided by ln 2, in no catalogue): is the diagnosis the
    factor 1 / ln 2 with 'use the natural log', and not a catalogued mistake?"""
    a = "05_grpo_lld"
    ns = reference.namespace(a, ROOT)
    ref = ns["likelihood_change"]

    def in_bits(logp_before, logp_after, correct):
        return ref(logp_before, logp_after, correct) / math.log(2)

    r = kernel.grade_function(a, "likelihood_change", in_bits, namespace=ns, root=ROOT)
    assert 0 < r.score < r.points
    assert [d.id for d in r.diagnoses] == ["shape:factor"], r.diagnoses
    assert "natural log" in r.diagnoses[0].text


def test_uncatalogued_mistake_on_a_real_function_gets_an_error_shape():
    """token_scores scaled by the hidden size D (no catalogued mistake does that): does the
    feedback name a factor equal to a length of the inputs, not a catalogued mistake?"""
    a = "06_nthr"
    ns = reference.namespace(a, ROOT)
    ref = ns["token_scores"]

    def scaled(h_a, err_a, h_b, err_b):
        out = ref(h_a, err_a, h_b, err_b)
        return out * h_a.shape[1]

    r = kernel.grade_function(a, "token_scores", scaled, namespace=ns, root=ROOT)
    assert 0 < r.score < r.points
    first = r.diagnoses[0]
    assert first.kind == "shape" and first.id == "shape:factor", r.diagnoses
    assert "axis 1 of `h_a`" in first.text
    assert "What your function does" in evaluate.feedback_text(r)


# -- generated cases: nothing of their inputs, nothing the learner chose ------------------------
#
# A generated case's inputs come from the course secret and the student id, the same on every
# regrade. Any text that depends on them (a message the learner's code wrote, a size, a shape,
# a factor, an offset, a returned number, a type name the learner's code defined) lets a
# resubmission read them and return them next time. For generated cases the text names the
# relation and the rule only; the full text is the detail (--show-hidden).


def _hidden(cases, names=()):
    return shapes.find_shape(cases, names, [True] * len(cases))


def test_message_holding_generated_inputs_is_not_quoted():
    """A learner raises with its inputs in the message: is the message kept out of the text
    (and in the detail), the exception type and the rule still said?"""
    leak = {"raised": "ValueError", "message": "x=[0.123456, 0.654321]"}
    s = _hidden([_case([A], 0.5, leak), _case([B], 1.0, leak)])
    assert s.id == "raised" and "ValueError" in s.text and "valid inputs" in s.text
    assert "0.123456" not in s.text and "0.123456" in s.detail


def test_message_of_a_fixed_case_is_still_quoted():
    """A fixed case's inputs are in the notebook: is the learner's message still quoted?"""
    msg = {"raised": "ZeroDivisionError", "message": "division by zero"}
    s = shapes.find_shape([_case([A], 0.5, msg), _case([B], 1.0, msg)], (), [False, True])
    assert "division by zero" in s.text


def test_exception_type_named_after_generated_inputs_is_not_shown():
    """A learner-defined exception class named after the inputs (`E_0_123`): generic words
    for a generated case; Python's own types by name."""
    named = {"raised": "E_0_123456", "message": ""}
    s = _hidden([_case([A], 0.5, named), _case([B], 1.0, named)])
    assert s.id == "raised" and "E_0_123456" not in s.text and "type your code defined" in s.text
    assert "E_0_123456" in s.detail


def test_lengths_of_generated_inputs_are_not_listed():
    """A sum where the mean was expected on generated inputs of lengths 3, 5, 7: is the
    length named (the rule) without its values?"""
    cases = []
    for n in (3, 5, 7):
        x = list(RNG.normal(size=n))
        cases.append(_case([x, x], float(np.mean(x)), float(np.mean(x)) * n))
    s = _hidden(cases, ["policy_logps", "reference_logps"])
    assert s.id == "factor" and "`policy_logps`" in s.text and "summed" in s.text
    assert "3, 5, 7" not in s.text and "3, 5, 7" in s.detail


def test_shapes_of_generated_cases_are_not_shown():
    """Wrong shapes on generated inputs: no sizes and no input dimensions in the text."""
    h_a, h_b = RNG.normal(size=(5, 2)), RNG.normal(size=(7, 2))
    s = _hidden([_case([h_a, h_b], np.zeros(5) + 1, np.zeros(7) + 1)], ["h_a", "h_b"])
    assert s.id == "wrong-shape" and "(7,)" not in s.text and "(5,)" not in s.text
    assert "5" not in s.text and "7" not in s.text and "(7,)" in s.detail
    t = _hidden([_case([B], B.sum(axis=0), B.sum(axis=1))])
    assert t.id == "wrong-axis" and "over axis 1" in t.text and "(3,)" not in t.text


@pytest.mark.parametrize(
    "got,number",
    [
        (lambda e: e * 1.234567, "1.23457"),  # a factor of the learner's choosing
        (lambda e: e + 0.765432, "0.765432"),  # an offset of the learner's choosing
        (lambda e: np.full_like(e, 0.424242), "0.424242"),  # a constant of the learner's choosing
    ],
)
def test_numbers_the_learner_returned_on_generated_cases_are_not_shown(got, number):
    """Values that encode the inputs (a factor, an offset, a constant the learner picked): is
    the relation named without the number, which stays in the detail?"""
    s = _hidden([_case([A], A, got(A)), _case([B], B, got(B))])
    assert s is not None and s.id in ("factor", "offset", "constant")
    assert number not in s.text and number in s.detail


def test_a_missing_square_is_named_as_a_power():
    """k2 written ½ · |log ratio| (no square): every value is (1/√2) · √expected, a relation no
    other shape names (its 12 failed checks were "Not recognised"). The line says a square is
    missing; it needs three distinct sizes (two points fit any power), and a passing check
    that contradicts it (a value right where the power would move it) silences it."""
    d = [np.array([1.6, 0.6]), np.array([0.3, 2.0, 4.0]), np.array([0.05, 49.0])]
    cases = [_case([x], 0.5 * x**2, 0.5 * x, rtol=1e-7, atol=1e-9) for x in d]
    found = _find(cases)
    assert found is not None and found.id == "power", found
    assert "squares something your code does not" in found.text
    squared = [_case([x], 0.5 * x, 0.25 * x**2, rtol=1e-7, atol=1e-9) for x in d]
    found = _find(squared)
    assert found is not None and found.id == "power" and "expected²" in found.text, found
    two = [_case([np.array([1.6, 0.6])], 0.5 * d[0] ** 2, 0.5 * d[0], 1e-7, 1e-9)]
    assert _find(two) is None or _find(two).id != "power"
    passing = [_case([np.array([3.0])], 4.5, 4.5, 1e-7, 1e-9)]  # right at e = 4.5, not c · √4.5
    found = shapes.find_shape(cases, (), (), passing)
    assert found is None or found.id != "power", found


def test_a_cross_entropy_where_a_kl_belongs_is_an_offset_by_the_entropy():
    """forward_kl returning −Σ p log q (the cross-entropy): every value is the KL plus the
    entropy of p, an amount that changes with p; no constant offset, factor or other shape
    holds, and 2.27 of its 3 points were "Not recognised" (only the check with p = q broke the
    stated KL(p‖p) = 0). The line names the entropy of the first argument."""
    rows = [([0.2, 0.8], [0.5, 0.5]), ([0.1, 0.6, 0.3], [0.3, 0.3, 0.4]), ([0.7, 0.3], [0.1, 0.9])]
    cases = []
    for p, q in rows:
        p, q = np.array(p), np.array(q)
        kl = float(np.sum(p * np.log(p / q)))
        ce = float(-np.sum(p * np.log(q)))
        cases.append(_case([p, q], kl, ce, rtol=1e-7, atol=1e-9))
    found = _find(cases, ("p", "q"))
    assert found is not None and found.id == "offset", found
    assert "entropy" in found.text and "`p`" in found.text and "cross-entropy" in found.text
    # a passing check where the entropy is not 0 (its value right) contradicts it
    p, q = np.array([0.5, 0.5]), np.array([0.4, 0.6])
    kl = float(np.sum(p * np.log(p / q)))
    passing = [_case([p, q], kl, kl, rtol=1e-7, atol=1e-9)]
    found = shapes.find_shape(cases, ("p", "q"), (), passing)
    assert found is None or "entropy" not in found.text, found


def test_an_offset_by_an_inputs_sum_is_named_and_one_value_of_it_is_not_enough():
    """Every value the expected one minus the sum of the first input: named as a term in that
    input alone. When the sum is the same on every failing check, it is a constant offset (its
    own line), not this one."""
    xs = [np.array([1.0, 2.0]), np.array([0.5, -3.0, 4.0]), np.array([2.5])]
    cases = [_case([x], float(np.prod(x)), float(np.prod(x) - x.sum()), 1e-7, 1e-9) for x in xs]
    found = _find(cases, ("x",))
    assert found is not None and found.id == "offset", found
    assert "minus the sum of `x`" in found.text, found.text
    same = [
        _case([x], float(np.prod(x)), float(np.prod(x) - 3.0), 1e-7, 1e-9)
        for x in (np.array([1.0, 2.0]), np.array([3.0]), np.array([-1.0, 4.0]))
    ]
    found = _find(same, ("x",))
    assert found is None or "sum of" not in found.text, found


def test_a_constant_factor_owns_the_gradient_checks_it_scales_alike():
    """nll_on_correct returning twice the mean: its gradient is twice the expected one too.
    The gradient checks were a second line, "differs … as your values do", with part of the
    cost of one cause; the factor line owns them and says so."""
    a = "07_beyond_nthr"
    ns = reference.namespace(a, ROOT)
    ref = ns["nll_on_correct"]

    def nll_on_correct(*args, **kwargs):
        return 2 * ref(*args, **kwargs)

    r = kernel.grade_function(a, "nll_on_correct", nll_on_correct, namespace=ns, root=ROOT)
    text = evaluate.feedback_text(r)
    assert [d.id for d in r.diagnoses] == ["shape:factor"], text
    assert "gradient" in r.diagnoses[0].text and r.unexplained_checks == 0, text
    assert any(c.kind == "gradient" and not c.passed for c in r.cases), text


def test_an_input_returned_unchanged_on_every_failing_check_is_named():
    """shaped_reward clamping the mean log ratio at 0: wherever the mean is negative the value
    is base_reward itself, the penalty left out (its loss was "Not recognised"). A flag or a
    mask whose True reads as 1, and one number returned on every failing check, are not this
    line (a coincidence and a constant)."""
    cases = [
        _case(
            [b, np.array([-2.0, -4.0]), np.array([-1.0, -1.0 - d]), 0.5], b + d / 2, b, 1e-7, 1e-9
        )
        for b, d in ((0.0, 1.0), (1.0, 0.5), (-0.5, 2.0))
    ]
    found = _find(cases, ("base_reward", "policy_logps", "reference_logps", "beta"))
    assert found is not None and found.id == "input-returned", found
    assert "`base_reward` itself" in found.text, found.text
    flags = [
        (
            {"args": [True, 0.3], "kwargs": {"$dict": {}}},
            {"value": -1.0},
            {"value": 1.0},
            1e-7,
            1e-9,
        ),
        (
            {"args": [True, 0.7], "kwargs": {"$dict": {}}},
            {"value": -1.0},
            {"value": 1.0},
            1e-7,
            1e-9,
        ),
    ]
    found = _find(flags, ("is_final", "x"))
    assert found is None or found.id != "input-returned", found
    same = [_case([2.0, float(x)], float(x), 2.0, 1e-7, 1e-9) for x in (1.0, 3.0)]
    found = _find(same, ("a", "b"))
    assert found is None or found.id != "input-returned", found
