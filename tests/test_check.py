"""`drills check NOTEBOOK`: the learner's grader (the "check my work" button calls it with --json)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"


def _check(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("DRILLS_SECRET", None)
    return subprocess.run(
        [sys.executable, "-m", "autograder.cli", "check", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_check_json_reports_full_marks_for_the_solution():
    """Does --json print one object with the score, every function and no warnings for the solution?"""
    p = _check(str(CORPUS / "solution.ipynb"), "--json")
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout)
    assert set(body) == {"assignment", "score", "max_score", "functions", "warnings"}
    assert (body["assignment"], body["score"], body["max_score"]) == ("01_exact_kl", 7.0, 7.0)
    assert [f["function"] for f in body["functions"]] == ["log_ratios", "forward_kl", "reverse_kl"]
    assert all(c["inputs"] is None for f in body["functions"] for c in f["cases"] if c["hidden"])


def test_check_json_says_not_attempted_for_the_stub():
    """An untouched exercise: exit 0, score 0, every function reported not attempted?"""
    p = _check(str(CORPUS / "stub.ipynb"), "--json", "--assignment", "01_exact_kl")
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout)
    assert body["score"] == 0.0 and not any(f["attempted"] for f in body["functions"])


def test_check_text_names_the_recognised_mistake_and_the_total():
    """Does the plain output give each function's feedback and a total line?"""
    p = _check(str(CORPUS / "duplicated_cell.ipynb"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.rstrip().endswith("Total: 7 / 7 points")
    assert "appears 2 times" in p.stdout


@pytest.mark.parametrize(
    "args",
    [["broken_json.ipynb"], ["missing.ipynb"], ["solution.ipynb", "--assignment", "99_nope"]],
)
def test_check_exits_2_on_unreadable_notebooks_and_usage_errors(args):
    """Broken JSON, a missing file or an unknown assignment: exit status 2 and a message on stderr?"""
    p = _check(str(CORPUS / args[0]), *args[1:])
    assert p.returncode == 2
    assert p.stderr.strip()


# The five kinds of submission that used to stop a whole class run, each a corpus
# fixture: `drills check` answers each with feedback or a sentence, never a traceback.
STOPPED_THE_RUN = {
    "nbgrader_metadata_number": (0, "cell 11's nbgrader metadata is a number"),
    "nbgrader_metadata_string": (0, "cell 11's nbgrader metadata is text"),
    "raises_lone_surrogate": (0, "Total: 4.45 / 7 points"),
    "returns_lone_surrogate": (0, "Total: 4.51 / 7 points"),
    "huge_int_literal": (0, "Exceeds the limit (4300 digits)"),
    "huge_int_in_json": (2, "a whole number of 5000 digits"),
}


@pytest.mark.parametrize("name", sorted(STOPPED_THE_RUN))
def test_check_answers_the_notebooks_that_used_to_crash_it(name):
    """Bad nbgrader metadata, lone surrogates in an exception or a return value, a 5000-digit
    integer in the code or in the JSON: exit 0 with feedback, or exit 2 with a sentence that
    says what is wrong; no traceback?"""
    rc, words = STOPPED_THE_RUN[name]
    p = _check(str(CORPUS / f"{name}.ipynb"), "--assignment", "01_exact_kl")
    assert p.returncode == rc, p.stderr[-2000:]
    assert "Traceback" not in p.stderr
    assert words in p.stdout + p.stderr, p.stdout + p.stderr


def test_check_json_of_a_surrogate_returning_notebook_parses():
    """--json (what the "check my work" button reads) of a function that returns a lone
    surrogate: one object that a strict UTF-8 JSON reader takes?"""
    p = _check(str(CORPUS / "returns_lone_surrogate.ipynb"), "--json")
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout.encode("utf-8").decode("utf-8"))
    assert body["score"] == 4.51


def test_check_on_a_terminal_that_cannot_encode_the_feedback_still_prints_it():
    """A terminal whose encoding is ASCII (LANG=C on an old system): feedback holds "·" and
    "✗", and used to end in UnicodeEncodeError; are they written as escapes instead?"""
    env = dict(os.environ, PYTHONIOENCODING="ascii")
    env.pop("DRILLS_SECRET", None)
    p = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "check", str(CORPUS / "duplicated_cell.ipynb")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Total: 7 / 7 points" in p.stdout and "\\xb7" in p.stdout


def _plant_beside(folder: Path) -> Path:
    """An ``autograder`` package beside a notebook that, when imported, leaves a marker and then
    hands over to the real package (so a check that imports it still says 7/7): the attack of a
    learner on the machine of the TA who checks their notebook. Returns the marker's path."""
    marker = folder / "planted-code-ran"
    plant = folder / "autograder"
    plant.mkdir()
    real = Path(__file__).resolve().parents[1] / "autograder"
    (plant / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n__path__.append({str(real)!r})\n"
    )
    return marker


@pytest.mark.slow
def test_a_package_planted_beside_the_notebook_is_not_imported_by_the_check(tmp_path, monkeypatch):
    """`drills check` started by the button (and the check server it starts) from the notebook's
    folder: the kernel's working folder holds the notebook and an ``autograder/__init__.py``
    the learner put there. Is the planted file never imported, and the check still graded?"""
    from autograder import widgets

    nb = tmp_path / "01_exact_kl.ipynb"
    nb.write_bytes((CORPUS / "solution.ipynb").read_bytes())
    marker = _plant_beside(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep)  # an empty entry names the working folder
    outcome = widgets.run_check(nb)
    assert not marker.exists(), "drills check imported the package planted beside the notebook"
    assert outcome.error is None, (outcome.error, outcome.detail)
    assert outcome.report["score"] == outcome.report["max_score"] == 7.0

    monkeypatch.setattr(widgets, "_WARMING", {})
    proc = widgets.start_warm("01_exact_kl")
    assert proc is not None, "the check server did not start"
    try:
        answer = widgets.ask_server("01_exact_kl", nb, timeout=240)
    finally:
        proc.stdin.close()
        proc.wait(timeout=300)
    assert not marker.exists(), "the check server imported the package planted beside the notebook"
    assert answer is not None and answer.report["score"] == 7.0, answer
