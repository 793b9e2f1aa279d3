"""`drills grade`'s outputs against a careless operator: a results cache reused across isolation
modes, two student folders that become one id, hidden values left readable by everyone."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from autograder.course.grade_cli import Grader, grade_course
from autograder.engine import submission, worker

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


# -- student ids that collide ------------------------------------------------------------------


def test_two_folders_that_become_one_student_id_are_an_error_naming_both(tmp_path):
    """`ann lee` and `ann_lee` both become student id `ann_lee`: is that one error row naming
    both folders (neither graded, none dropped without a word), and the rest of the class
    graded as usual?"""
    subs = _submitted(
        tmp_path, {"ann lee": "solution", "ann_lee": "nan_and_inf", "bob": "solution"}
    )
    out = tmp_path / "out"
    g = Grader(hidden=[out.resolve()])
    stats = grade_course([subs], out, g)
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert [(r["student_id"], r["score"]) for r in rows] == [("ann_lee", "0.0"), ("bob", "7.0")]
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    (ann,) = [r for r in results if r["student"] == "ann_lee"]
    assert "'ann lee'" in ann["error"] and "'ann_lee'" in ann["error"]
    assert str(subs / "ann lee") in ann["error"] and str(subs / "ann_lee") in ann["error"]
    page = (out / "feedback" / "ann_lee" / f"{A}.html").read_text()
    assert "ann lee" in page and "rename" in page
    assert stats.could_not_grade == 1 and stats.submissions == 2


def test_collision_across_assignments_is_still_refused(tmp_path):
    """`ann lee` submits one assignment and `ann_lee` another: still two students behind one
    id in the gradebook, so both rows are errors that name the other folder."""
    root = tmp_path / "submitted"
    for student, a in (("ann lee", A), ("ann_lee", "02_clipped_estimators")):
        (root / student / a).mkdir(parents=True)
        shutil.copyfile(CORPUS / "solution.ipynb", root / student / a / f"{a}.ipynb")
    subs = submission.discover([root])
    assert [(s.student, s.assignment) for s in subs] == [
        ("ann_lee", A),
        ("ann_lee", "02_clipped_estimators"),
    ]
    assert all(s.error and "'ann lee'" in s.error and "'ann_lee'" in s.error for s in subs)


def test_same_folder_name_twice_is_not_a_collision(tmp_path):
    """One student's folder under two given paths is the same student (a duplicate, kept as a
    warning as before), not two students behind one id."""
    for d in ("x", "y"):
        folder = tmp_path / d / "submitted" / "dan" / A
        folder.mkdir(parents=True)
        shutil.copyfile(CORPUS / "solution.ipynb", folder / f"{A}.ipynb")
    (sub,) = submission.discover([tmp_path / "x", tmp_path / "y"])
    assert sub.error is None and "ignored" in sub.warnings[0]


# -- private outputs ---------------------------------------------------------------------------


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mode & 0o777 for p in [root, *root.rglob("*")]}


def test_files_holding_hidden_values_are_private_whatever_the_umask(tmp_path, monkeypatch):
    """Under umask 022 (644 files, 755 folders): are results.json(l), the results cache, the
    --show-hidden feedback pages and the outcome cache's entries 0600 in 0700 folders, so
    another user of a shared file system cannot read a class's generated inputs?"""
    subs = _submitted(tmp_path, {"ann": "nan_and_inf"})
    out = tmp_path / "out"
    outcomes = tmp_path / "outcome-cache"
    monkeypatch.setenv("DRILLS_CACHE_DIR", str(outcomes))
    old = os.umask(0o022)
    try:
        grade_course([subs], out, Grader(hidden=[out.resolve()]), show_hidden=True)
    finally:
        os.umask(old)
    modes = _modes(out)
    private_files = ["results.json", "results.jsonl", f"feedback/ann/{A}.html"]
    private_files += [n for n in modes if n.startswith(".drills-cache/") and n.endswith(".json")]
    assert len(private_files) == 4, sorted(modes)  # one results cache entry
    for name in private_files + [".drills-cache/lock"]:
        assert modes[name] == 0o600, (name, oct(modes[name]))
    for name in [".", ".drills-cache", "feedback", "feedback/ann"]:
        assert modes[name] == 0o700, (name, oct(modes[name]))
    assert all(modes[n] == 0o700 for n in modes if n.startswith(".drills-cache/") and "." not in n)
    cached = _modes(outcomes)
    assert any(n.endswith(".json") for n in cached), "the outcome cache was not written"
    for name, mode in cached.items():
        want = 0o600 if (outcomes / name).is_file() else 0o700
        assert mode == want, (name, oct(mode))


def test_results_are_private_in_an_output_folder_the_user_made(tmp_path):
    """An output folder made beforehand with umask 022 (0755) is left as it is, but the
    files with hidden values in it are still 0600; feedback pages without --show-hidden,
    meant to be handed out, stay 0644."""
    subs = _submitted(tmp_path, {"ann": "nan_and_inf"})
    out = tmp_path / "out"
    old = os.umask(0o022)
    try:
        out.mkdir()
        grade_course([subs], out, Grader(hidden=[out.resolve()]))
    finally:
        os.umask(old)
    modes = _modes(out)
    assert modes["."] == 0o755
    assert modes["results.json"] == modes["results.jsonl"] == 0o600
    assert modes[".drills-cache"] == 0o700
    assert modes[f"feedback/ann/{A}.html"] == 0o644
