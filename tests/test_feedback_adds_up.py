"""Feedback that adds up: one cause, one line, and the costs shown sum to what was lost.

Checked over every stub variant of every notebook (the solution with one function or helper
put back to its stub, graded in this process: tests/stub_variants.py) and, through `drills
check`, over the misbehaving-submission corpus (test_feedback_consistency).
"""

from __future__ import annotations

import pytest
import stub_variants
from conftest import available_assignments

from autograder.cases.spec import Case, FunctionSpec, Mistake, Split
from autograder.scoring import evaluate

ASSIGNMENTS = available_assignments()


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_stubbed_function_or_helper_never_shows_costs_that_do_not_add_up(assignment):
    found = [
        f"{stubbed}: {p}"
        for stubbed in stub_variants.variants(assignment)
        for r in stub_variants.grade_variant(assignment, stubbed)
        for p in stub_variants.problems(r)
    ]
    assert not found, found


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_deleted_function_or_helper_is_a_crash_not_a_missing_input_check(assignment):
    """A helper deleted by mistake: its callers raise NameError on every check. The
    feedback names that once, never "must raise ValueError … instead of returning NaN" on
    the input checks that raised the same NameError, and its costs add up."""
    found = [
        f"{deleted} deleted: {p}"
        for deleted in stub_variants.variants(assignment)
        for r in stub_variants.grade_variant(assignment, deleted, delete=True)
        for p in stub_variants.problems(r)
    ]
    assert not found, found


def test_a_stubbed_helper_is_one_line_not_a_generic_shape_and_a_false_validation_mistake():
    """05 with `_require_finite` left as a stub: each function that calls it is told so, once,
    at the cost of the checks it made raise; neither "raised NotImplementedError on valid
    inputs" nor "must raise ValueError" is added on those same checks."""
    results = stub_variants.grade_variant("05_grpo_lld", "_require_finite")
    told = [r for r in results if any(d.id == "stub-helper" for d in r.diagnoses)]
    assert told, [evaluate.feedback_text(r) for r in results]
    for r in told:
        assert [d.kind for d in r.diagnoses if d.id != "stub-helper"] == [], [
            (d.id, d.text) for d in r.diagnoses
        ]
        raised = [c for c in r.cases if c.got.get("raised") == "NotImplementedError"]
        stub = next(d for d in r.diagnoses if d.id == "stub-helper")
        assert stub.points + r.unexplained == pytest.approx(r.points - r.score), (stub, r)
        assert f"{len(raised)} of {len(r.cases)} checks raise" in stub.text


EXPECTED = [{"value": v} for v in (1.0, 2.0, 3.0)]


def _third_spec():
    cases = tuple(Case(id=f"c{k}", args=(float(k),)) for k in range(3))
    m = Mistake("doubled", "you doubled it", build=lambda ns: None)
    return FunctionSpec("f", cases, (m,), Split(100, 0, 0, reason="Values only."))


def test_costs_of_thirds_are_rounded_so_that_they_sum_to_the_loss():
    """Three checks of 1/3 point each: a mistake that explains two and one unexplained check
    must show 0.67 + 0.33 (or 0.66 + 0.34), never 0.67 + 0.33 beside a loss of 0.99."""
    fspec = _third_spec()
    got = [{"value": 2.0}, {"value": 4.0}, {"value": -7.0}]
    mutants = {"doubled": [{"value": 2.0}, {"value": 4.0}, {"value": 6.0}]}
    inputs = [{"args": [float(k)], "kwargs": {"$dict": {}}} for k in range(3)]
    r = evaluate.score("x", fspec, 1.0, inputs, EXPECTED, got, None, mutants)
    assert r.score == 0.0
    assert [d.id for d in r.diagnoses] == ["doubled"]
    assert r.unexplained_checks == 1
    assert r.diagnoses[0].points + r.unexplained == pytest.approx(1.0)
    text = evaluate.feedback_text(r)
    assert "Not recognised: 1 failed check matches no known mistake" in text, text


def test_apportion_gives_whole_cents_that_sum_to_the_total():
    assert evaluate._apportion([1 / 3, 1 / 3, 1 / 3], 100) == [34, 33, 33]
    assert sum(evaluate._apportion([0.125, 0.125, 0.75], 100)) == 100
    assert evaluate._apportion([0.0, 0.5], 50) == [0, 50]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_catalogued_mistake_shows_costs_that_add_up(assignment):
    from conftest import ROOT

    from autograder import assignments
    from autograder.notebooks import reference
    from autograder.scoring import kernel

    ns = reference.namespace(assignment, ROOT)
    found = []
    for fspec in assignments.get(assignment).functions:
        for m in fspec.mistakes:
            r = kernel.grade_function(assignment, fspec.name, m.build(ns), namespace=ns, root=ROOT)
            found += [f"{m.id}: {p}" for p in stub_variants.problems(r)]
    assert not found, found


def costs_that_do_not_add_up(feedback: str) -> list[str]:
    """Functions of a `drills check` text whose "(costs …)" lines do not sum to the points
    lost ("name: S / P points (k of n checks passed)")."""
    import re

    bad, head, costs = [], None, []

    def close():
        if head is not None:
            name, s, p = head
            if abs(sum(costs) - (p - s)) > 1e-6:
                bad.append(f"{name}: lost {p - s:g}, costs shown {costs}")

    for line in feedback.splitlines():
        m = re.match(r"(\w+): ([\d.]+) / ([\d.]+) points \(\d+ of \d+ checks passed\)", line)
        if m:
            close()
            head, costs = (m.group(1), float(m.group(2)), float(m.group(3))), []
        elif not line.startswith(" "):
            close()
            head = None
        else:
            costs += [float(c) for c in re.findall(r"\(costs ([\d.]+) points?\)\s*$", line)]
    close()
    return bad


def test_the_text_parser_finds_costs_that_do_not_add_up():
    text = "f: 1 / 2 points (1 of 2 checks passed)\n  What: x (costs 0.5 points)\n"
    assert costs_that_do_not_add_up(text)
    assert not costs_that_do_not_add_up(text.replace("0.5 points", "1 point"))
