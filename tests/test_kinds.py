"""Case kinds, splits, the score formula and the order of diagnoses, on small synthetic specs.

The score of a function is points × Σ over kinds of (the kind's share × the weighted
fraction of its cases passed), rounded to 2 decimals; diagnoses put the formula
first and the input checks after it, at most three.
"""

from __future__ import annotations

import re

import pytest

from autograder.cases.spec import DEFAULT_SPLIT, GRADIENT_SPLIT, Case, FunctionSpec, Mistake, Split
from autograder.scoring import evaluate

V = {"value": 1.0}


def _spec(mistakes=(), split=DEFAULT_SPLIT, edge=True):
    cases = [
        Case("v1", (1.0,)),
        Case("v2", (2.0,), weight=3.0),
        *([Case("e1", (0.0,), kind="edge")] if edge else []),
        *[Case(f"i{k}", (-1.0,), raises=ValueError) for k in range(4)],
    ]
    return FunctionSpec("f", tuple(cases), tuple(mistakes), split)


EXPECTED = [V, {"value": 2.0}, {"value": 0.0}] + [{"raised": "ValueError", "message": "m"}] * 4
INPUTS = [{"args": [1.0], "kwargs": {"$dict": {}}}] * 7


def _score(fspec, got, mutants=None, points=2.0):
    return evaluate.score("x", fspec, points, INPUTS, EXPECTED, got, None, mutants or {})


def test_case_kind_is_invalid_exactly_when_it_raises():
    assert Case("a", (1,), raises=ValueError).kind == "invalid"
    assert Case("a", (1,)).kind == "value"
    assert Case("a", (1,), kind="edge").kind == "edge"
    with pytest.raises(ValueError, match="exactly when it raises"):
        Case("a", (1,), raises=ValueError, kind="edge")
    with pytest.raises(ValueError, match="exactly when it raises"):
        Case("a", (1,), kind="invalid")
    with pytest.raises(ValueError, match="kind"):
        Case("a", (1,), kind="corner")


def test_split_other_than_the_default_needs_a_reason():
    with pytest.raises(ValueError, match="needs a reason"):
        _spec(split=Split(80, 10, 10))
    assert _spec(split=Split(80, 10, 10, reason="Why not.")).split.value == 80


def test_input_checks_never_weigh_more_than_20_percent():
    with pytest.raises(ValueError, match="at most 20"):
        _spec(split=Split(60, 15, 25, reason="Too many checks."))


def test_a_function_without_edge_cases_needs_an_explicit_split():
    with pytest.raises(ValueError, match="no edge cases"):
        _spec(edge=False)
    assert _spec(edge=False, split=Split(85, 0, 15, reason="No edge rule.")).split.edge == 0


def test_shares_must_sum_to_100():
    with pytest.raises(ValueError, match="summing to 100"):
        _spec(split=Split(70, 15, 10, reason="Oops."))


def test_score_is_points_times_share_times_weighted_fraction_within_each_kind():
    """v2 (weight 3 of 4) passes, v1 fails; the edge case passes; 2 of 4 input checks pass."""
    bad = {"value": 9.0}
    none = {"value": None}
    got = [bad, {"value": 2.0}, {"value": 0.0}, EXPECTED[3], EXPECTED[3], none, none]
    r = _score(_spec(), got)
    want = 2.0 * (0.70 * 3 / 4 + 0.15 * 1 + 0.15 * 2 / 4)
    assert r.score == round(want, 2) == 1.5
    assert [(k.kind, k.points, k.score) for k in r.kinds] == [
        ("value", 1.4, 1.05),
        ("edge", 0.3, 0.3),
        ("invalid", 0.3, 0.15),
    ]


def test_full_marks_are_exactly_the_points_and_the_fraction_is_exactly_one():
    r = _score(_spec(), list(EXPECTED), points=3.0)
    assert r.score == 3.0 and r.fraction == 1.0


def test_skipping_every_input_check_keeps_85_percent_with_the_default_split():
    got = list(EXPECTED[:3]) + [{"value": 0.5}] * 4
    assert _score(_spec(), got).score == round(2.0 * 0.85, 2)


# -- the order of diagnoses ---------------------------------------------------------------------

NO_RAISE = [{"value": 0.5}] * 4
CONCEPT = Mistake("concept", "you did the formula wrong", build=lambda ns: None)
CHECKS = Mistake(
    "checks", "invalid inputs must raise ValueError", build=lambda ns: None, validation=True
)
SOME = Mistake("some-checks", "one check is missing", build=lambda ns: None, validation=True)
MUTANTS = {
    "concept": [{"value": 5.0}, {"value": 10.0}, EXPECTED[2], *EXPECTED[3:]],
    "checks": [*EXPECTED[:3], *NO_RAISE],
    "some-checks": [*EXPECTED[:3], NO_RAISE[0], *EXPECTED[4:]],
}


def test_formula_mistake_comes_first_and_missing_checks_second():
    """Wrong formula and no checks: the conceptual diagnosis first, the validation one second,
    although the checks are 4 of the 7 cases?"""
    fspec = _spec((CONCEPT, CHECKS))
    r = _score(fspec, MUTANTS["concept"][:3] + NO_RAISE, MUTANTS)
    assert [(d.id, d.kind) for d in r.diagnoses] == [
        ("concept", "concept"),
        ("checks", "validation"),
    ]
    assert [d.points for d in r.diagnoses] == [1.4, 0.3]
    assert r.mistake == "concept" and r.diagnosis == CONCEPT.diagnosis
    text = evaluate.feedback_text(r)
    assert text.index("you did the formula wrong") < text.index("must raise ValueError")


def test_validation_diagnosis_is_never_alone_while_values_fail():
    """An uncatalogued formula error and no checks: no validation diagnosis on its own."""
    fspec = _spec((CONCEPT, CHECKS))
    got = [{"value": 7.0}, {"value": -3.0}, EXPECTED[2], *NO_RAISE]
    r = _score(fspec, got, MUTANTS)
    assert all(d.kind != "validation" for d in r.diagnoses), r.diagnoses


def test_validation_diagnosis_alone_when_every_value_passes():
    fspec = _spec((CONCEPT, CHECKS))
    r = _score(fspec, [*EXPECTED[:3], *NO_RAISE], MUTANTS)
    assert [d.id for d in r.diagnoses] == ["checks"]


def test_an_error_shape_comes_first_when_no_mistake_explains_the_values():
    """Every value doubled (no catalogued mistake) and no checks: the shape, then the checks."""
    fspec = _spec((CONCEPT, CHECKS))
    got = [{"value": 2.0}, {"value": 4.0}, EXPECTED[2], *NO_RAISE]
    inputs = [{"args": [x], "kwargs": {"$dict": {}}} for x in (1.0, 2.0, 0.0, -1, -1, -1, -1)]
    r = evaluate.score("x", fspec, 2.0, inputs, EXPECTED, got, None, MUTANTS)
    assert [d.kind for d in r.diagnoses] == ["shape", "validation"], r.diagnoses
    assert r.diagnoses[0].id == "shape:factor"


def test_two_partial_validation_mistakes_are_both_named():
    """Only one of four checks missing: the partial mistake, not 'no validation'."""
    fspec = _spec((CONCEPT, CHECKS, SOME))
    r = _score(fspec, [*EXPECTED[:3], NO_RAISE[0], *EXPECTED[4:]], MUTANTS)
    assert [d.id for d in r.diagnoses] == ["some-checks"]


def test_at_most_three_diagnoses():
    extra = [
        Mistake(f"c{k}", f"formula {k}", build=lambda ns: None, validation=True) for k in range(4)
    ]
    mutants = dict(MUTANTS)
    for k, m in enumerate(extra):
        out = list(EXPECTED)
        out[3 + k] = {"value": 0.5}
        mutants[m.id] = out
    fspec = _spec((*extra,))
    r = _score(fspec, [*EXPECTED[:3], *NO_RAISE], mutants)
    assert len(r.diagnoses) == 3


def test_mutants_are_not_read_when_everything_passes():
    """A lazy mapping of mistake outcomes is never touched for a full-marks function."""

    class Untouchable(dict):
        def __getitem__(self, key):
            raise AssertionError("mistake outcomes read for a passing function")

    r = _score(_spec((CONCEPT,)), list(EXPECTED), Untouchable())
    assert r.score == 2.0 and r.diagnoses == []


# -- the declarative mistake helper ------------------------------------------------------------


def test_a_mistake_needs_exactly_one_way_to_build_it():
    with pytest.raises(ValueError, match="exactly one"):
        Mistake("m", "text")
    with pytest.raises(ValueError, match="exactly one"):
        Mistake("m", "text", formula=lambda x: x, unchecked=True)
    assert Mistake("m", "text", unchecked=("beta",)).validation


def test_a_formula_mistake_validates_like_the_reference_then_computes_its_formula():
    """formula= runs after the reference (so it raises where the reference raises), with the
    reference's defaults filled in and, if asked, the namespace."""

    def ref(x, scale=2.0):
        if x < 0:
            raise ValueError("x < 0")
        return scale * x

    spec = FunctionSpec(
        "ref",
        (Case("v", (1.0,)), Case("e", (0.0,), kind="edge"), Case("i", (-1.0,), raises=ValueError)),
        (
            Mistake("plus", "you added", formula=lambda x, scale: x + scale),
            Mistake("ns", "uses ns", formula=lambda x, scale, ns: ns["offset"] + x),
        ),
    )
    ns = {"ref": ref, "offset": 10.0}
    plus, uses_ns = (m.build(ns) for m in spec.mistakes)
    assert plus(1.0) == 3.0 and plus(1.0, scale=5.0) == 6.0
    with pytest.raises(ValueError):
        plus(-1.0)
    assert uses_ns(1.0) == 11.0
    assert all(m.function == "ref" for m in spec.mistakes)


# -- where the learner and the instructor see it ---------------------------------------------


def test_feedback_page_shows_points_per_kind_and_every_diagnosis():
    from autograder.course import report

    fspec = _spec((CONCEPT, CHECKS))
    r = _score(fspec, MUTANTS["concept"][:3] + NO_RAISE, MUTANTS)
    page = report.feedback_html(report.SubmissionResult("s", "x", "p", 2.0, functions=[r]))
    assert "the formula 0 / 1.4 · edge cases 0.3 / 0.3 · input checks 0 / 0.3" in page
    assert page.index("you did the formula wrong") < page.index("must raise ValueError")
    assert "Recognised mistake (input checks)" in page


def test_drills_cases_lists_kinds_and_the_split(capsys):
    from autograder import cli

    assert cli.main(["cases", "04_rlef_turn_rewards"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"task_reward: \d+ cases \(value \d+, edge 0, invalid \d+\)", out)
    assert "How `task_reward` is graded (2 points): the formula 85 %, input checks 15 %." in out
    assert "How `extract_code` is graded (2 points): the formula 70 %, edge cases 15 %" in out
    assert " edge " in out and " invalid " in out and "validation" in out


def _grad_spec():
    cases = [
        Case("v1", (1.0,)),
        Case("e1", (0.0,), kind="edge"),
        Case("i1", (-1.0,), raises=ValueError),
        Case("g1", (1.0,), kind="gradient"),
        Case("g2", (2.0,), kind="gradient"),
    ]
    return FunctionSpec("f", tuple(cases), split=GRADIENT_SPLIT, with_gradient=("x",))


GRAD_OK = {"value": {"$dict": {"x": 1.0}}}
GRAD_NONE = {"value": {"$dict": {"x": 0.0}}}


def test_a_right_value_with_no_gradient_loses_the_gradient_share_and_says_so():
    """The gradient is a fourth kind with its own share, shown beside the others, and its
    failure is explained by naming the input no gradient reached."""
    fspec = _grad_spec()
    expected = [V, {"value": 0.0}, {"raised": "ValueError", "message": "m"}, GRAD_OK, GRAD_OK]
    got = expected[:3] + [GRAD_NONE, GRAD_NONE]
    inputs = [{"args": [1.0], "kwargs": {"$dict": {}}}] * 5
    r = evaluate.score("x", fspec, 2.0, inputs, expected, got, None, {})
    assert r.score == 1.6
    assert evaluate.kinds_text(r.kinds).endswith("the gradient 0 / 0.4")
    assert r.mistake == "gradient" and "no gradient reaches `x`" in r.diagnosis
    assert r.diagnoses[0].points == 0.4


def test_the_default_split_gives_the_gradient_nothing_and_a_gradient_split_states_why():
    assert DEFAULT_SPLIT.gradient == 0 and DEFAULT_SPLIT.is_default
    assert not GRADIENT_SPLIT.is_default and GRADIENT_SPLIT.reason
    assert "the gradient 20 %" in GRADIENT_SPLIT.text()
    with pytest.raises(ValueError, match="no gradient cases"):
        _spec(split=Split(50, 15, 15, "why", gradient=20))
