"""Same submissions, same secret: the same grades every run, with any number of workers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import nbgrader_course
import pytest
from conftest import run_drills

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"
A = "01_exact_kl"

pytestmark = pytest.mark.slow


def _grade(subs: Path, out: Path, jobs: int) -> tuple[str, list]:
    p = run_drills(
        "grade", str(subs), "--out", str(out), "--jobs", str(jobs), "--timeout", "10", timeout=600
    )
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads((out / "results.json").read_text())
    verdicts = [
        (
            s["student"],
            s["assignment"],
            f["function"],
            f["mistake"],
            [c["verdict"] for c in f["cases"]],
        )
        for s in res["submissions"]
        for f in s["functions"]
    ]
    return (out / "grades.csv").read_text(), verdicts


def test_grades_are_identical_across_runs_and_job_counts(tmp_path):
    """Graded three times (--jobs 1, 2, 2): are grades.csv and every verdict identical?"""
    subs = tmp_path / "submitted"
    learners = nbgrader_course.learner_notebooks(A)
    for student, nb in learners.items():
        folder = subs / student / A
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{A}.ipynb"))
    # fork_bomb is not here: the runs would spend most of their time on its children, and its
    # verdicts and outcomes are compared warm against cold (tests/test_warm_worker.py) and its
    # scores checked in three gradings (the corpus run and both of those).
    for name in (
        "os_exit",
        "nan_and_inf",
        "duplicated_cell",
        "broken_json",
        "monkeypatch",
    ):
        folder = subs / f"corpus-{name}" / A
        folder.mkdir(parents=True)
        shutil.copy(CORPUS / f"{name}.ipynb", folder / f"{A}.ipynb")
    runs = [_grade(subs, tmp_path / f"out{i}", jobs) for i, jobs in enumerate((1, 2, 2))]
    assert runs[0] == runs[1] == runs[2]
    assert len(runs[0][0].splitlines()) == 1 + len(learners) + 5  # header, one row each
