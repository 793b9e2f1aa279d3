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
from autograder.engine import layout, submission, worker

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


def test_two_folders_that_become_one_student_id_are_an_error_naming_both(tmp_path, capsys):
    """`ann lee` and `ann_lee` both become student id `ann_lee`: does each folder get its own
    error row in grades.csv (neither graded, neither merged into the other, none dropped), each
    naming both folders, the console naming both too, and the rest of the class graded?"""
    import argparse

    from autograder.course import grade_cli

    subs = _submitted(
        tmp_path, {"ann lee": "solution", "ann_lee": "nan_and_inf", "bob": "solution"}
    )
    out = tmp_path / "out"
    args = argparse.Namespace(
        submissions=[str(subs)], out=str(out), assignment=None, jobs=1, secret_file=None,
        timeout=30.0, budget=None, memory=2048, show_hidden=False, shard=None, force=False,
        canvas_roster=None,
    )  # fmt: skip
    assert grade_cli._grade_cmd(args) == 0
    console = capsys.readouterr().err
    rows = list(csv.DictReader((out / "grades.csv").open()))
    ids = [layout.collision_id("ann_lee", "ann lee"), layout.collision_id("ann_lee", "ann_lee")]
    assert sorted(r["student_id"] for r in rows) == sorted([*ids, "bob"])
    assert [r["score"] for r in rows if r["student_id"] == "bob"] == ["7.0"]
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for sid in ids:
        (r,) = [r for r in results if r["student"] == sid]
        assert "'ann lee'" in r["error"] and "'ann_lee'" in r["error"]
        assert str(subs / "ann lee") in r["error"] and str(subs / "ann_lee") in r["error"]
        page = (out / "feedback" / sid / f"{A}.html").read_text()
        assert "ann lee" in page and "rename" in page
    assert console.count("not graded:") == 2, console
    assert str(subs / "ann lee") in console and str(subs / "ann_lee") in console


def test_collision_across_assignments_is_still_refused(tmp_path):
    """`ann lee` submits one assignment and `ann_lee` another: still two students behind one
    id in the gradebook, so both rows are errors that name the other folder."""
    root = tmp_path / "submitted"
    for student, a in (("ann lee", A), ("ann_lee", "02_clipped_estimators")):
        (root / student / a).mkdir(parents=True)
        shutil.copyfile(CORPUS / "solution.ipynb", root / student / a / f"{a}.ipynb")
    subs = layout.discover([root])
    assert [(s.student, s.assignment) for s in subs] == [
        (layout.collision_id("ann_lee", "ann lee"), A),
        (layout.collision_id("ann_lee", "ann_lee"), "02_clipped_estimators"),
    ]
    assert all(s.error and "'ann lee'" in s.error and "'ann_lee'" in s.error for s in subs)


def test_same_folder_given_twice_is_not_a_collision(tmp_path):
    """One student's folder reached through two given paths (the course folder, and the same
    folder through a link to it) is the same student (a duplicate, kept as a warning), not two
    students behind one id."""
    folder = tmp_path / "x" / "submitted" / "dan" / A
    folder.mkdir(parents=True)
    shutil.copyfile(CORPUS / "solution.ipynb", folder / f"{A}.ipynb")
    (tmp_path / "y").symlink_to(tmp_path / "x")
    (sub,) = layout.discover([tmp_path / "x", tmp_path / "y"])
    assert sub.error is None and "ignored" in sub.warnings[0]


def test_the_same_name_in_composed_and_decomposed_unicode_is_one_id_and_a_collision(tmp_path):
    """`josé` with one accented letter and `josé` with an `e` and a combining accent: one student
    id (`josé`, not two students), and so two folders behind one id, each an error row naming
    both?"""
    import unicodedata

    nfc, nfd = unicodedata.normalize("NFC", "josé"), unicodedata.normalize("NFD", "josé")
    assert nfc != nfd
    subs = _submitted(tmp_path, {nfc: "solution", nfd: "solution"})
    found = layout.discover([subs])
    assert len(found) == 2 and len({s.student for s in found}) == 2
    assert all(s.student.startswith(nfc + layout.COLLISION_MARK) and s.error for s in found)
    assert all(ascii(nfc) in s.error and ascii(nfd) in s.error for s in found)
    assert all("two Unicode forms" in s.error for s in found)


# -- the layout: nothing outside a student's own folder counts as theirs -----------------------


def test_a_folder_nested_in_another_students_cannot_claim_their_id(tmp_path):
    """`mallory/bob/01_exact_kl/…` must not become bob's row (bob submitted nothing), and
    `0mallory/carol/01_exact_kl/…` (sorted first) must not replace carol's own notebook: are
    both reported on their owner's row, carol graded from her own file, and no row for bob?"""
    root = _submitted(tmp_path, {"carol": "nan_and_inf"})
    for owner, victim in (("mallory", "bob"), ("0mallory", "carol")):
        folder = root / owner / victim / A
        folder.mkdir(parents=True)
        shutil.copyfile(CORPUS / "solution.ipynb", folder / f"{A}.ipynb")
    found = {s.student: s for s in layout.discover([root])}
    assert sorted(found) == ["0mallory", "carol", "mallory"]
    assert found["carol"].path == root / "carol" / A / f"{A}.ipynb" and not found["carol"].error
    assert not found["carol"].warnings
    for owner, victim in (("mallory", "bob"), ("0mallory", "carol")):
        assert found[owner].error and "deeper than <student>/<assignment>/" in found[owner].error
        assert str(root / owner / victim / A / f"{A}.ipynb") in found[owner].error


def test_links_are_never_followed_at_any_level(tmp_path):
    """A notebook linked to the course solution, a notebook linked to /dev/zero, a student
    folder and an assignment folder that are links, a timestamp.txt linked to the secret file:
    is each an error row (or, for the timestamp, a warning) naming the link, and nothing read
    through it?"""
    root = tmp_path / "submitted"
    solution = REPO / "solutions" / A / f"{A}.ipynb"
    secret = tmp_path / "course.secret"
    secret.write_text("the-course-secret-4711")
    real = tmp_path / "elsewhere" / A
    real.mkdir(parents=True)
    shutil.copyfile(CORPUS / "solution.ipynb", real / f"{A}.ipynb")
    for student in ("to_solution", "to_zero", "ts"):
        (root / student / A).mkdir(parents=True)
    (root / "to_solution" / A / f"{A}.ipynb").symlink_to(solution)
    (root / "to_zero" / A / f"{A}.ipynb").symlink_to("/dev/zero")
    shutil.copyfile(CORPUS / "solution.ipynb", root / "ts" / A / f"{A}.ipynb")
    (root / "ts" / A / "timestamp.txt").symlink_to(secret)
    (root / "linked_student").symlink_to(real.parent)
    (root / "linked_assignment").mkdir()
    (root / "linked_assignment" / A).symlink_to(real)
    found = {s.student: s for s in layout.discover([root])}
    assert sorted(found) == ["linked_assignment", "linked_student", "to_solution", "to_zero", "ts"]
    for student in ("to_solution", "to_zero", "linked_student", "linked_assignment"):
        assert found[student].error and "symbolic link" in found[student].error, student
    assert found["ts"].error is None and found["ts"].timestamp == ""
    assert any("timestamp.txt" in w and "symbolic link" in w for w in found["ts"].warnings)
    assert "4711" not in repr(found)


def test_a_linked_timestamp_or_notebook_puts_nothing_of_its_target_in_any_output(tmp_path):
    """End to end: a timestamp.txt linked to the secret file and a notebook linked to the course
    solution, graded by `drills grade`: is the secret in no output (grades.csv, results.json(l),
    feedback, the results cache), the linked notebook an error row with no grade, and the
    other student graded as usual?"""
    secret_text = "course-secret-text-90210"
    secret = tmp_path / "course.secret"
    secret.write_text(secret_text)
    root = _submitted(tmp_path, {"ts": "solution"})
    (root / "ts" / A / "timestamp.txt").symlink_to(secret)
    (root / "linked" / A).mkdir(parents=True)
    (root / "linked" / A / f"{A}.ipynb").symlink_to(REPO / "solutions" / A / f"{A}.ipynb")
    out = tmp_path / "out"
    stats = grade_course([root], out, Grader(hidden=[out.resolve()]))
    rows = {r["student_id"]: r for r in csv.DictReader((out / "grades.csv").open())}
    assert rows["ts"]["score"] == "7.0" and rows["ts"]["timestamp"] == ""
    assert rows["linked"]["score"] == "" and stats.could_not_grade == 1
    assert any("symbolic link" in line for line in stats.not_graded)
    for f in out.rglob("*"):
        if f.is_file():
            assert secret_text.encode() not in f.read_bytes(), f


def test_a_device_or_a_pipe_named_like_a_notebook_is_refused_without_reading_it(tmp_path):
    """A FIFO named 01_exact_kl.ipynb would block a reader forever, /dev/zero would fill its
    memory: are both refused at once with a reason, by discovery and by load_notebook?"""
    from autograder.engine import files

    folder = tmp_path / "submitted" / "pat" / A
    folder.mkdir(parents=True)
    fifo = folder / f"{A}.ipynb"
    os.mkfifo(fifo)
    (sub,) = layout.discover([tmp_path / "submitted"])
    assert sub.error and "not a regular file" in sub.error
    with pytest.raises(submission.SubmissionError, match="not a regular file"):
        submission.load_notebook(fifo)
    with pytest.raises(files.Refused, match="character device"):
        files.read_regular("/dev/zero", 1000)
    big = tmp_path / "big.ipynb"
    big.write_bytes(b" " * 2001)
    with pytest.raises(files.Refused, match="limit"):
        files.read_regular(big, 2000)


def test_every_folder_under_the_root_is_a_row_or_a_named_warning(tmp_path):
    """A dot folder, `...`, a folder of odd characters, an empty student folder and a folder in a
    student's folder that holds no notebook: a row for each student (ids made safe, with a
    warning), the empty one an error row, the stray folder named on its student's row?"""
    root = _submitted(tmp_path, {".hidden": "solution", "...": "solution", "a\nb": "solution"})
    (root / "empty").mkdir()
    (root / "ann" / A).mkdir(parents=True)
    shutil.copyfile(CORPUS / "solution.ipynb", root / "ann" / A / f"{A}.ipynb")
    (root / "ann" / "data").mkdir()
    (root / "ann" / A / ".ipynb_checkpoints").mkdir()
    shutil.copyfile(
        CORPUS / "stub.ipynb", root / "ann" / A / ".ipynb_checkpoints" / f"{A}-checkpoint.ipynb"
    )
    found = {s.given_id: s for s in layout.discover([root])}
    assert sorted(found) == sorted([".hidden", "...", "a\nb", "empty", "ann"])
    assert found[".hidden"].student == ".hidden" and not found[".hidden"].error
    assert found["..."].student == "..." and not found["..."].error
    assert found["a\nb"].student == "a_b" and "changed" in found["a\nb"].warnings[0]
    assert found["empty"].error and "no notebook" in found["empty"].error
    assert found["ann"].path.name == f"{A}.ipynb" and not found["ann"].error
    assert any(str(root / "ann" / "data") in w for w in found["ann"].warnings)


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


def test_a_run_collects_garbage_less_often_and_puts_the_setting_back(tmp_path, monkeypatch):
    """Grading raises the collector's first threshold for the run (most of what it allocates is
    short-lived and acyclic): is it raised while the run reads the submissions, and put back
    afterwards, also when the run fails (a process that grades twice, or a test session, must
    not keep the setting)?"""
    import gc

    from autograder.course import class_run

    before = gc.get_threshold()
    seen = []
    real = layout.discover

    def discover(*a, **k):
        seen.append(gc.get_threshold())
        return real(*a, **k)

    monkeypatch.setattr(layout, "discover", discover)
    grade_course([_submitted(tmp_path, {"ann": "solution"})], tmp_path / "out", Grader())
    assert seen[-1][0] == max(before[0], class_run.GC_THRESHOLD), seen
    assert gc.get_threshold() == before
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no notebooks"):
        grade_course([empty], tmp_path / "out2", Grader())
    assert seen[-1][0] == max(before[0], class_run.GC_THRESHOLD)
    assert gc.get_threshold() == before


def test_the_thread_that_drives_jobs_does_not_parse_the_setup_cells(monkeypatch):
    """CPython 3.11 builds AST objects with one counter for all threads: two threads parsing
    at once can fail with "AST constructor recursion depth mismatch", which made one
    notebook "could not be read" in a sharded run. The job thread asked which modules to
    preload (parsing the setup cells) for every job while the main thread read and scored.
    Once the grader has worked out an assignment's preload (on its main thread, before the
    jobs), is asking again for the same setup cells free of any parsing?"""
    import ast

    setup = [("setup_imports", "import math\n\nimport numpy as np\nimport torch")]
    first = worker.preload_for(setup)
    assert first == ("numpy", "torch")

    def no_parse(*a, **k):
        raise AssertionError("the setup cells were parsed again")

    monkeypatch.setattr(ast, "parse", no_parse)
    assert worker.preload_for([list(cell) for cell in setup]) == first  # as a job holds them


@pytest.mark.parametrize("stage", ["_read", "_score"])
def test_a_reading_or_scoring_hit_by_two_threads_parsing_at_once_is_tried_again(
    tmp_path, monkeypatch, stage
):
    """Two threads building AST objects at once (a check server's warm-up running 04's
    reference, which parses code, beside a click reading a notebook) can fail with CPython
    3.11's "AST constructor recursion depth mismatch" though the notebook is fine. Is a
    submission whose reading or scoring fails that way once graded as usual, while another
    SystemError still makes the row say why?"""
    from autograder.course import grade_cli

    real = getattr(Grader, stage)
    failures = {"left": 1}

    def flaky(self, item):
        if failures["left"]:
            failures["left"] -= 1
            raise SystemError(f"{grade_cli.AST_RACE} (before=180, after=40)")
        return real(self, item)

    monkeypatch.setattr(Grader, stage, flaky)
    subs = _submitted(tmp_path, {"ann": "solution"})
    grade_course([subs], tmp_path / "out", Grader(hidden=[(tmp_path / "out").resolve()]))
    rows = list(csv.DictReader((tmp_path / "out" / "grades.csv").open()))
    assert [r["score"] for r in rows] == ["7.0"] and failures["left"] == 0, rows

    def broken(self, item):
        raise SystemError("some other interpreter failure")

    monkeypatch.setattr(Grader, stage, broken)
    grade_course([subs], tmp_path / "out2", Grader(hidden=[(tmp_path / "out2").resolve()]))
    result = json.loads((tmp_path / "out2" / "results.jsonl").read_text().splitlines()[0])
    said = json.dumps(result)
    assert "some other interpreter failure" in said, result
