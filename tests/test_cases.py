"""The grading contract, checked for every graded function of every assignment.

For each function: does the reference score full marks? does every catalogued
mistake lose points and get its own diagnosis? is an unattempted stub scored 0
and called "not attempted"? do invalid inputs raise ValueError in the
reference? is grading deterministic, and does a new secret change the hidden
inputs without changing the reference's full marks?
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import types

import pytest
from conftest import ROOT, available_assignments

from autograder import assignments, evaluate, notebook, reference, seeds
from autograder.kernel import grade_cell

ASSIGNMENTS = available_assignments()
FUNCTIONS = [(a, f.name) for a in ASSIGNMENTS for f in assignments.get(a).functions]
MISTAKES = [
    (a, f.name, m.id) for a in ASSIGNMENTS for f in assignments.get(a).functions for m in f.mistakes
]


def _grade(a, name, fn, secret=None):
    ns = reference.namespace(a, ROOT)
    return evaluate.grade_function(a, name, fn, namespace=ns, secret=secret, root=ROOT)


def _stub(*args, **kwargs):
    raise NotImplementedError()


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_reference_scores_full_marks(assignment, function):
    """Does the notebook's own solution pass every case?"""
    ns = reference.namespace(assignment, ROOT)
    r = _grade(assignment, function, ns[function])
    failed = [c.id for c in r.cases if not c.passed]
    assert not failed, f"reference fails {failed}"
    assert r.score == r.points > 0 and r.fraction == 1.0 and r.mistake is None


@pytest.mark.parametrize("assignment,function,mistake", MISTAKES)
def test_known_mistake_loses_points_and_is_diagnosed(assignment, function, mistake):
    """Does each catalogued mistake score less than full marks, with its own diagnosis shown?"""
    fspec = assignments.get(assignment).function(function)
    m = next(x for x in fspec.mistakes if x.id == mistake)
    ns = reference.namespace(assignment, ROOT)
    r = _grade(assignment, function, m.build(ns))
    assert r.attempted
    assert r.score < r.points, f"mistake {mistake} gets full marks: the cases cannot see it"
    assert r.mistake == mistake, f"mistake {mistake} diagnosed as {r.mistake}"
    assert m.diagnosis in evaluate.feedback_text(r)


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_unattempted_stub_scores_zero_and_says_so(assignment, function):
    """Is a function that still raises NotImplementedError 'not attempted' with 0 points?"""
    r = _grade(assignment, function, _stub)
    assert not r.attempted and r.score == 0.0 and r.mistake is None
    assert "not attempted" in evaluate.feedback_text(r)


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_reference_raises_value_error_exactly_where_cases_say(assignment, function):
    """Do invalid inputs raise ValueError in the reference, and valid ones return a value?"""
    fspec = assignments.get(assignment).function(function)
    inputs = evaluate.materialize(assignment, fspec, seeds.course_secret())
    expected = evaluate.reference_outcomes(assignment, fspec, inputs, ROOT)
    assert any(c.raises is ValueError for c in fspec.cases), "no invalid-input case"
    for case, out in zip(fspec.cases, expected):
        if case.raises is ValueError:
            assert out.get("raised") == "ValueError", (case.id, out)
            assert out.get("message"), f"{case.id}: ValueError without a message"
        else:
            assert "value" in out, (case.id, out)


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_grading_twice_gives_identical_results(assignment, function):
    """Same submission, same secret: the same verdicts and diagnosis, every run?"""
    fspec = assignments.get(assignment).function(function)
    ns = reference.namespace(assignment, ROOT)
    fn = fspec.mistakes[0].build(ns) if fspec.mistakes else ns[function]

    def strip(r):
        d = r.to_json(show_hidden=True)
        for c in d["cases"]:
            c["seconds"] = 0
        return json.dumps(d, sort_keys=True)

    assert strip(_grade(assignment, function, fn)) == strip(_grade(assignment, function, fn))


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_other_secret_changes_hidden_inputs_not_full_marks(assignment, function):
    """Does a course secret change the generated inputs while the reference keeps full marks?"""
    fspec = assignments.get(assignment).function(function)
    assert any(c.hidden for c in fspec.cases), "no generated case"
    public = evaluate.materialize(assignment, fspec, seeds.PUBLIC_DEFAULT_SECRET)
    secret = evaluate.materialize(assignment, fspec, "an instructor's secret")
    for case, a, b in zip(fspec.cases, public, secret):
        if case.hidden:
            assert a["args"] != b["args"], f"{case.id}: the secret does not change its inputs"
        else:
            assert a == b
    ns = reference.namespace(assignment, ROOT)
    r = _grade(assignment, function, ns[function], secret="an instructor's secret")
    assert r.score == r.points


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_source_notebook_cells_match_the_cases(assignment):
    """Has every graded function a solution cell and a test cell calling grade_cell on it, with points?"""
    nb = notebook.read(notebook.source_path(assignment, ROOT))
    spec = assignments.get(assignment)
    solutions = {
        notebook.nbgrader_meta(c)["grade_id"]
        for c in nb.cells
        if notebook.cell_role(c) == "solution"
    }
    tests = {
        notebook.nbgrader_meta(c)["grade_id"]: c
        for c in nb.cells
        if notebook.cell_role(c) == "test"
    }
    assert set(spec.names) <= solutions
    assert set(tests) == {f"test_{n}" for n in spec.names}
    for name in spec.names:
        cell = tests[f"test_{name}"]
        assert float(notebook.nbgrader_meta(cell)["points"]) > 0
        hidden = re.search(r"### BEGIN HIDDEN TESTS\n(.*)\n### END HIDDEN TESTS", cell.source, re.S)
        assert hidden, f"test_{name} has no hidden block"
        assert f'grade_cell("{assignment}", "{name}", {name})' in hidden.group(1)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_grade_cell_prints_to_stdout_only_and_returns_points(assignment):
    """Under nbgrader any stderr output scores 0: does grade_cell stay silent there, even for noisy code?"""
    spec = assignments.get(assignment)
    ns = reference.namespace(assignment, ROOT)
    for f in spec.functions:

        def noisy(*args, _f=ns[f.name], **kwargs):
            import sys
            import warnings

            print("learner says hi", file=sys.stderr)
            warnings.warn("a learner warning", stacklevel=2)
            return _f(*args, **kwargs)

        # the learner's function lives in the notebook's namespace (Turn and friends are there)
        noisy = types.FunctionType(noisy.__code__, ns, f.name, None, None)
        noisy.__kwdefaults__ = {"_f": ns[f.name]}
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            value = grade_cell(assignment, f.name, noisy)
        assert type(value) is float and value == notebook.points(assignment, f.name, ROOT)
        assert err.getvalue() == ""
        assert f.name in out.getvalue()
