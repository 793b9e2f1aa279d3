"""`drills grade`'s outputs against a careless operator: a results cache reused across isolation
modes, two student folders that become one id, hidden values left readable by everyone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder import worker
from autograder.grade_cli import Grader, grade_course

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"
A = "01_exact_kl"


def _submitted(tmp_path: Path, students: dict[str, str]) -> Path:
    """submitted/<student>/01_exact_kl/01_exact_kl.ipynb for each student (a corpus notebook)."""
    root = tmp_path / "submitted"
    for student, corpus_name in students.items():
        folder = root / student / A
        folder.mkdir(parents=True)
        shutil.copyfile(CORPUS / f"{corpus_name}.ipynb", folder / f"{A}.ipynb")
    return root


# -- the results cache and the isolation mode --------------------------------------------------


def test_result_graded_warm_is_not_reused_by_a_cold_or_reduced_rerun(tmp_path, monkeypatch):
    """A result stored by a run asking for warm workers: does a rerun with warm workers off, or
    with reduced isolation, grade again instead of reusing it (and a warm rerun reuse it)?"""
    subs = _submitted(tmp_path, {"ann": "solution"})
    out = tmp_path / "out"
    monkeypatch.setattr(worker, "warm_possible", lambda iso: None)  # as on a host where warm works

    def run(**grader_options):
        g = Grader(hidden=[out.resolve()], **grader_options)
        return g.run_mode(), grade_course([subs], out, g)

    mode, first = run()
    if mode != "warm":
        pytest.skip(f"no bubblewrap here: the run's mode is {mode}")
    assert first.graded == 1
    _, again = run()
    assert (again.graded, again.from_cache) == (0, 1), "a warm rerun should reuse the warm result"
    mode, cold = run(warm=False)
    assert mode == "cold" and (cold.graded, cold.from_cache) == (1, 0)
    mode, reduced = run(force_reduced=True)
    assert mode == "reduced" and (reduced.graded, reduced.from_cache) == (1, 0)


def test_drills_warm_off_counts_as_a_cold_run(monkeypatch):
    """DRILLS_WARM=off: is the run keyed as cold, not as the warm run it would otherwise be?"""
    g = Grader()
    if g.isolation.reduced:
        pytest.skip("no bubblewrap here")
    monkeypatch.setenv("DRILLS_WARM", "off")
    assert g.run_mode() == "cold"
