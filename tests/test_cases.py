"""The grading contract, checked for every graded function of every assignment.

For each function: does the reference score full marks? does every catalogued
mistake lose points and get its own diagnosis first, alone and combined with
missing input checks? does the reference formula without any input check keep at
least 80 % of the points? is an unattempted stub scored 0 and called "not
attempted"? do invalid inputs raise ValueError in the reference? is grading
deterministic, and does a new secret change the hidden inputs without changing
the reference's full marks? does each notebook say how each function is graded,
and list the catalogue in its common-mistakes table?
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import types

import pytest
from conftest import ROOT, available_assignments, catalogued_mistakes

from autograder import assignments
from autograder.cases import codec, seeds, spec
from autograder.cases.compare import same_outcome
from autograder.notebooks import notebook, reference, source
from autograder.scoring import evaluate, kernel, memo
from autograder.scoring.kernel import grade_cell

ASSIGNMENTS = available_assignments()
FUNCTIONS = [(a, f.name) for a in ASSIGNMENTS for f in assignments.get(a).functions]
MISTAKES = catalogued_mistakes()
CONCEPT_MISTAKES = catalogued_mistakes(conceptual_only=True)


def _grade(a, name, fn, secret=None):
    ns = reference.namespace(a, ROOT)
    return kernel.grade_function(a, name, fn, namespace=ns, secret=secret, root=ROOT)


# A catalogued mistake that suddenly fails no case is as often a reference that changed into
# it (a sign, a default, a boundary) as a mistake that needs a case: say both.
WRONG_REFERENCE = (
    "If the reference changed since the mistake was catalogued, the reference may be wrong "
    "instead: it now agrees with the mistake (tests/test_reference.py and the reference stage "
    "of drills author-check check it against evidence it did not produce)."
)


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
    assert r.score < r.points, (
        f"{function}: mistake {mistake} fails no case: add a case that tells it apart (an input "
        "on which it and the reference differ beyond the tolerance), or drop it. " + WRONG_REFERENCE
    )
    assert r.mistake == mistake, (
        f"{function}: mistake {mistake} is diagnosed as {r.mistake}: that diagnosis matches its "
        "failures first. Add a case on which the two differ, or, if they are the same slip, "
        "keep one of them"
    )
    assert m.diagnosis in evaluate.feedback_text(r)
    _assert_diagnoses_well_ordered(r)


def _assert_diagnoses_well_ordered(r):
    """At most three; conceptual ones (concept, shape) before validation ones; each group by
    the points it costs; never a validation diagnosis alone while a value or edge case fails."""
    ds = r.diagnoses
    assert len(ds) <= 3
    kinds = [d.kind for d in ds]
    assert kinds == sorted(kinds, key=lambda k: k == "validation"), kinds
    for group in (
        [d for d in ds if d.kind != "validation"],
        [d for d in ds if d.kind == "validation"],
    ):
        assert [d.points for d in group] == sorted((d.points for d in group), reverse=True)
    concept_failed = any(not c.passed and c.kind != "invalid" for c in r.cases)
    if concept_failed and ds:
        assert ds[0].kind != "validation", "a validation diagnosis shown first while values fail"
    if ds:
        assert (r.mistake, r.diagnosis) == (ds[0].id, ds[0].text)


@pytest.mark.parametrize("assignment,function,mistake", MISTAKES)
def test_validation_flag_says_where_the_mistake_fails(assignment, function, mistake):
    """Is a mistake flagged `validation` exactly when all its failures are on invalid-input cases?"""
    fspec = assignments.get(assignment).function(function)
    m = next(x for x in fspec.mistakes if x.id == mistake)
    inputs = evaluate.materialize(assignment, fspec, seeds.course_secret())
    expected = memo.reference_outcomes(assignment, fspec, inputs, ROOT)
    got = memo.mistake_outcomes(assignment, fspec, inputs, ROOT)[mistake]
    problem = validation_flag_problem(function, m, failing_kinds(fspec, expected, got))
    assert problem is None, problem


def failing_kinds(fspec, expected, got) -> set[str]:
    return {
        c.kind
        for c, e, g in zip(fspec.cases, expected, got)
        if not same_outcome(e, g, c.rtol, c.atol)
    }


def validation_flag_problem(function: str, m: spec.Mistake, kinds: set[str]) -> str | None:
    """What is wrong with mistake ``m``'s ``validation`` flag, given the kinds of the cases it
    fails, and what to do; None when nothing is."""
    if not kinds:
        return (
            f"{function}: mistake {m.id} fails no case: add a case that tells it apart, or drop it. "
            + WRONG_REFERENCE
        )
    if m.validation and kinds != {"invalid"}:
        return (
            f"{function}: mistake {m.id} is a validation mistake (validation=True, or "
            f"unchecked=) but fails {sorted(kinds - {'invalid'})} cases too: if that is its "
            "point, write it as formula= or build= without validation=True; if not, make it "
            "differ from the reference only in its input checks"
        )
    if not m.validation and kinds == {"invalid"}:
        return (
            f"{function}: mistake {m.id} fails input-check cases only: set validation=True on it "
            "(or write it as unchecked=), so it is matched on invalid cases and shown after the "
            "conceptual diagnoses"
        )
    return None


def test_validation_flag_messages_say_which_flag_to_set():
    """Planted: a checks-only mistake without the flag, a formula mistake with it, and a
    'mistake' that is the reference: each message names the fix."""
    a, name = "01_exact_kl", "log_ratios"
    fspec = assignments.get(a).function(name)
    ns = reference.namespace(a, ROOT)
    inputs = evaluate.materialize(a, fspec, seeds.course_secret())
    expected = memo.reference_outcomes(a, fspec, inputs, ROOT)

    def kinds_of(fn):
        got = [codec.outcome_of(fn, i["args"], i["kwargs"], ns) for i in inputs]
        return failing_kinds(fspec, expected, got)

    unchecked = next(m for m in fspec.mistakes if m.id == "no-validation")
    flagless = dataclasses.replace(unchecked, unchecked=False, validation=False)
    msg = validation_flag_problem(name, flagless, kinds_of(unchecked.build(ns)))
    assert msg and "set validation=True" in msg
    log2 = next(m for m in fspec.mistakes if m.id == "log2")
    flagged = dataclasses.replace(log2, validation=True)
    msg = validation_flag_problem(name, flagged, kinds_of(log2.build(ns)))
    assert msg and "without validation=True" in msg
    msg = validation_flag_problem(name, log2, kinds_of(ns[name]))
    assert msg and "fails no case: add a case that tells it apart, or drop it" in msg
    assert validation_flag_problem(name, log2, kinds_of(log2.build(ns))) is None


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_reference_formula_without_input_checks_keeps_80_percent(assignment, function):
    """The reference with every `raise ValueError` removed (a learner who got the formula right and
    skipped validation): does it pass every value and edge case, fail some input check, and still
    score at least 80 % of the function's points?"""
    fn, ns = source.without_checks(assignment, function, root=ROOT)
    r = kernel.grade_function(assignment, function, fn, namespace=ns, root=ROOT)
    assert all(c.passed for c in r.cases if c.kind != "invalid")
    assert not all(c.passed for c in r.cases if c.kind == "invalid")
    assert r.score >= 0.8 * r.points, f"{r.score} / {r.points}"
    _assert_diagnoses_well_ordered(r)


@pytest.mark.parametrize("assignment,function,mistake", CONCEPT_MISTAKES)
def test_mistake_with_missing_validation_shows_the_mistake_first(assignment, function, mistake):
    """A catalogued formula mistake built on a reference without input checks (the mistake and
    no validation at once): is the formula mistake diagnosed first, and the missing validation
    after it when the checks alone are diagnosed?"""
    fspec = assignments.get(assignment).function(function)
    m = next(x for x in fspec.mistakes if x.id == mistake)
    unchecked, ns = source.without_checks(assignment, function, root=ROOT)
    r = _grade_in(assignment, function, m.build(ns), ns)
    assert not all(c.passed for c in r.cases if c.kind == "invalid"), "checks still in place"
    assert r.diagnoses and r.diagnoses[0].id == mistake, r.diagnoses
    _assert_diagnoses_well_ordered(r)
    alone = _grade_in(assignment, function, unchecked, ns)
    if any(d.kind == "validation" for d in alone.diagnoses):
        assert any(d.kind == "validation" for d in r.diagnoses[1:]), r.diagnoses


def _grade_in(a, name, fn, ns):
    return kernel.grade_function(a, name, fn, namespace=ns, root=ROOT)


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_points_per_kind_add_up_and_follow_the_split(assignment, function):
    """Do the kinds' points follow the declared split, and add up to the function's points?"""
    fspec = assignments.get(assignment).function(function)
    ns = reference.namespace(assignment, ROOT)
    r = _grade(assignment, function, ns[function])
    assert {k.kind: k.share for k in r.kinds} == {
        k: fspec.split.share(k) for k in spec.KINDS if fspec.split.share(k)
    }
    assert sum(k.points for k in r.kinds) == pytest.approx(r.points, abs=0.015)
    assert all(k.score == k.points for k in r.kinds)
    assert evaluate.kinds_text(r.kinds) in evaluate.feedback_text(r)


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
    expected = memo.reference_outcomes(assignment, fspec, inputs, ROOT)
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
    assert set(spec.names) <= solutions, (
        f"no solution cell (nbgrader solution: true, grade_id = the name) for "
        f"{sorted(set(spec.names) - solutions)}: `drills new-function` writes one"
    )
    assert set(tests) == {f"test_{n}" for n in spec.names}, (
        f"test cells (grade: true, grade_id test_<name>) {sorted(tests)} do not match the "
        f"graded functions {spec.names} of the case module's SPEC"
    )
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


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_notebook_says_under_each_function_how_it_is_graded(assignment):
    """Is the markdown cell right under each graded function's solution cell the grading line of
    its split and points ("the formula 70 %, edge cases 15 %, input checks 15 %")?"""
    nb = notebook.read(notebook.source_path(assignment, ROOT))
    for f in assignments.get(assignment).functions:
        i = next(
            k
            for k, c in enumerate(nb.cells)
            if notebook.cell_role(c) == "solution"
            and re.search(rf"^def {f.name}\(", c.source, re.M)
        )
        below = nb.cells[i + 1]
        want = spec.grading_line(
            f.name, notebook.points(assignment, f.name, ROOT), f.split, (f.rtol, f.atol)
        )
        assert below.cell_type == "markdown" and want in below.source, (
            f"{f.name}: the cell under the solution should say\n{want}\nit says\n{below.source}"
            f"\n(`drills cases {assignment} --grading-lines` rewrites it)"
        )


def mistakes_table(source: str) -> set[tuple[str, str]]:
    """(function, mistake id) pairs of a notebook's common-mistakes table.

    Rows are ``| `function` | mistake | what happens | `id`, `id` |``; an empty function
    column means the function of the row above."""
    pairs, current = set(), []
    for line in source.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or set(cells[0]) <= {"-", ":"} and cells[0]:
            continue
        names = re.findall(r"`(\w+)`", cells[0])
        ids = re.findall(r"`([\w.\-]+)`", cells[-1])
        if names:
            current = names
        pairs |= {(f, m) for f in current for m in ids}
    return pairs


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_common_mistakes_table_lists_the_catalogue(assignment):
    """Does the notebook's common-mistakes table name every catalogued mistake of every function
    (by its feedback id), and nothing that is not catalogued?"""
    nb = notebook.read(notebook.source_path(assignment, ROOT))
    cell = next(
        c for c in nb.cells if c.cell_type == "markdown" and "## Common mistakes" in c.source
    )
    table = mistakes_table(cell.source.split("## Common mistakes", 1)[1].split("\n## ", 1)[0])
    catalogue = {(f.name, m.id) for f in assignments.get(assignment).functions for m in f.mistakes}
    assert table == catalogue, (
        f"missing from the notebook's common-mistakes table: {sorted(catalogue - table)} (add "
        "a row | `function` | mistake | what you get | `id` |); in the table but not "
        f"catalogued: {sorted(table - catalogue)} (remove the row, or add the Mistake)"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_function_catalogues_five_mistakes_each_naming_its_source(assignment):
    """Does every function catalogue at least five mistakes, and does each name where
    it is documented ("<where>: <what it shows>") or say plainly that no
    source was found (spec.NO_SOURCE) — never an empty source?"""
    for f in assignments.get(assignment).functions:
        assert len(f.mistakes) >= 5, (
            f"{f.name}: {len(f.mistakes)} mistakes: catalogue at least five (docs/authoring.md, "
            "step 4), each with its source"
        )
        for m in f.mistakes:
            assert m.source == spec.NO_SOURCE or ": " in m.source, (
                f"{f.name}: mistake {m.id}'s source {m.source!r}: write "
                '"<where>: <what it shows>", or spec.NO_SOURCE when none was found'
            )
