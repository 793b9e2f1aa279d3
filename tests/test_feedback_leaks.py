"""Feedback that carries nothing of a generated case: the attack that reads generated inputs back out of feedback.

tests/fixtures/corpus/leaks_generated_inputs.ipynb is right on the notebook's own inputs
and, on a generated one, `forward_kl` raises an error whose message spells the input and
`reverse_kl` returns the first entry of the first generated input on every generated case.
Error shapes used to quote the message ("raised ValueError (\"LEAK policy=[0.0749…\")") and
the number returned ("you returned 0.690981 on every failing check"): graded again with the
same secret and student id, the generated inputs are the same, so a learner reading them
fills a lookup table and passes every generated case. `reverse_kl` also returns that number
on a *fixed* case that comes after the generated ones (`within-tolerance`, whose inputs have
more than two decimals): a fixed case's value, shown until then, carried a generated input.

Every path that shows feedback to a learner is probed for any generated input of that
student under that secret: the feedback page, `drills check` (text and --json), the
notebook widget, nbgrader's hidden-test cell output and Gradescope's results. The
instructor's views (results.json, --show-hidden) must still hold them: that is what shows
the probe would see a leak.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import leak_probe
import nbformat
import pytest

from autograder import widgets
from autograder.cli import main as drills
from autograder.course.exports import gradescope
from autograder.course.grade_cli import Grader, grade_course
from autograder.scoring import kernel

REPO = Path(__file__).resolve().parent.parent
ATTACK = REPO / "tests" / "fixtures" / "corpus" / "leaks_generated_inputs.ipynb"
A = "01_exact_kl"
SECRET = "leak-secret-8c2d41"
STUDENT = "mallory"


def generated_digits() -> set[str]:
    return leak_probe.generated_digits(A, SECRET, STUDENT)


leaked = leak_probe.leaked


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The attack graded by `drills grade` (with and without --show-hidden) for STUDENT."""
    tmp = tmp_path_factory.mktemp("leak")
    folder = tmp / "submitted" / STUDENT / A
    folder.mkdir(parents=True)
    shutil.copyfile(ATTACK, folder / f"{A}.ipynb")
    outs = {}
    for show in (False, True):
        out = tmp / f"out-{show}"
        grade_course([tmp / "submitted"], out, Grader(secret=SECRET), show_hidden=show)
        outs[show] = out
    return tmp, outs


def test_the_attack_reads_generated_inputs_where_an_instructor_may(graded):
    """The instructor's results.jsonl and a --show-hidden page hold the generated inputs
    (the learner's message, the number returned): the probe sees a leak where there is one."""
    _, outs = graded
    digits = generated_digits()
    assert leaked((outs[False] / "results.jsonl").read_text(), digits)
    assert leaked((outs[True] / "feedback" / STUDENT / f"{A}.html").read_text(), digits)


def test_feedback_page_shows_no_generated_input(graded):
    """The page a learner gets: the shape and the exception type, no message, no number."""
    _, outs = graded
    page = (outs[False] / "feedback" / STUDENT / f"{A}.html").read_text()
    assert "raised ValueError on valid inputs" in page and "the same number" in page
    # the fixed cases ran in children sent no generated input: reverse_kl's value on the
    # fixed case within-tolerance is the one it could find there (0.25), and is shown
    assert "not shown" not in page
    assert leaked(page, generated_digits()) == []


def test_drills_check_shows_no_generated_input(monkeypatch, capsys):
    """`drills check --student` (text and --json) and the widget that renders its report."""
    monkeypatch.setenv("DRILLS_SECRET", SECRET)
    digits = generated_digits()
    assert drills(["check", str(ATTACK), "--student", STUDENT, "--assignment", A]) == 0
    text = capsys.readouterr().out
    assert "raised ValueError" in text and leaked(text, digits) == []
    assert drills(["check", str(ATTACK), "--student", STUDENT, "--assignment", A, "--json"]) == 0
    body = capsys.readouterr().out
    assert leaked(body, digits) == []
    assert leaked(widgets.render_report(json.loads(body), ATTACK), digits) == []
    drills(["check", str(ATTACK), "--student", STUDENT, "--assignment", A, "--show-hidden"])
    assert leaked(capsys.readouterr().out, digits), "--show-hidden is the instructor's view"


def test_nbgrader_hidden_test_output_shows_no_generated_input(monkeypatch, tmp_path):
    """The hidden-test cell's printout under nbgrader autograde (student from the folder)."""
    monkeypatch.setenv("DRILLS_SECRET", SECRET)
    where = tmp_path / "autograded" / STUDENT / A
    where.mkdir(parents=True)
    monkeypatch.chdir(where)
    ns: dict = {}
    nb = nbformat.read(str(ATTACK), as_version=4)
    for c in nb.cells:
        meta = c.get("metadata", {}).get("nbgrader", {})
        if c.cell_type == "code" and (
            meta.get("solution") or meta.get("grade_id") == "setup_imports"
        ):
            exec(compile(c.source, meta.get("grade_id", "cell"), "exec"), ns)  # noqa: S102
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for name in ("forward_kl", "reverse_kl"):
            kernel.grade_cell(A, name, ns[name])
    text = printed.getvalue()
    assert "raised ValueError" in text and leaked(text, generated_digits()) == []
    # in one kernel the fixed case within-tolerance runs after the generated cases: its
    # value (the first generated input's first entry) is not printed
    assert "not shown: your code had already been called on a generated input" in text


def test_gradescope_results_show_no_generated_input(graded):
    """Gradescope's results.json, built from the results.jsonl line (which holds them)."""
    _, outs = graded
    item = json.loads((outs[False] / "results.jsonl").read_text().splitlines()[0])
    body = json.dumps(gradescope.results_for(item, "visible", 1.0, ""), ensure_ascii=False)
    assert leaked(body, generated_digits()) == []


def test_known_mistakes_values_are_still_shown_after_generated_cases():
    """Hiding every value after a generated case would hide what helps most: a fixed case's
    value that a catalogued mistake (or NaN, inf, None) explains carries nothing of a
    generated input: is it still shown (while an error message, and the attack's value in
    test_feedback_page_shows_no_generated_input, are not)?"""
    from conftest import ROOT

    from autograder import assignments
    from autograder.notebooks import reference
    from autograder.scoring import evaluate

    ns = reference.namespace(A, ROOT)
    mistake = next(
        m for m in assignments.get(A).function("forward_kl").mistakes if not m.validation
    )
    r = kernel.grade_function(
        A, "forward_kl", mistake.build(ns), namespace=ns, root=ROOT, after_generated=True
    )
    values = [c for c in r.cases if not c.passed and not c.hidden and "value" in c.got]
    assert len(values) >= 3 and not any(c.after_generated for c in values)
    raised = [c for c in r.cases if not c.passed and not c.hidden and "raised" in c.got]
    assert all(c.after_generated for c in raised)  # an error message is the learner's text
    text = evaluate.feedback_text(r, max_cases=len(r.cases))
    assert "got:      -0.510826" in text  # the story's value, as the mistake computes it


def test_fixed_cases_run_where_no_generated_input_can_be_found(tmp_path, monkeypatch, capsys):
    """A child holds every case it was sent: corpus fixture reads_generated_inputs_via_gc
    finds them with gc and raises with them on the very first (fixed) case, whose message
    feedback quotes. Under a course secret the fixed cases run in children sent no
    generated input: does nothing of them reach the page or `drills check`, while the
    instructor's results.jsonl shows the attack found them in the generated cases' run?"""
    attack = ATTACK.with_name("reads_generated_inputs_via_gc.ipynb")
    folder = tmp_path / "submitted" / STUDENT / A
    folder.mkdir(parents=True)
    shutil.copyfile(attack, folder / f"{A}.ipynb")
    out = tmp_path / "out"
    grade_course([tmp_path / "submitted"], out, Grader(secret=SECRET))
    digits = generated_digits()
    assert leaked((out / "results.jsonl").read_text(), digits), "the attack found nothing"
    page = (out / "feedback" / STUDENT / f"{A}.html").read_text()
    assert leaked(page, digits) == []
    item = json.loads((out / "results.jsonl").read_text())
    (lr,) = [f for f in item["functions"] if f["function"] == "log_ratios"]
    assert all(c["passed"] for c in lr["cases"] if not c["hidden"])  # found nothing there
    monkeypatch.setenv("DRILLS_SECRET", SECRET)
    drills(["check", str(attack), "--student", STUDENT, "--assignment", A, "--json"])
    assert leaked(capsys.readouterr().out, digits) == []


def test_public_default_secret_hides_no_fixed_value(monkeypatch, capsys):
    """With the public default secret anyone can draw the generated inputs, so a learner's
    own `drills check` keeps showing their value on a fixed case run after generated ones."""
    monkeypatch.delenv("DRILLS_SECRET", raising=False)
    assert drills(["check", str(ATTACK), "--assignment", A]) == 0
    text = capsys.readouterr().out
    assert "within-tolerance" in text and "not shown" not in text
