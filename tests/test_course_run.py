"""Grading a class with `drills grade`: the class report, resumable runs, shards and merge.

One class of 40 submissions (tests/class_fixture.py: every catalogued mistake of 01 and 04,
correct, blank and unrecognised notebooks, a few of 02 and 03) is graded once without
interruption; the other runs are compared with that one.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import class_fixture
import pytest
from conftest import run_drills, sweep

from autograder.course import results_cache, shards
from autograder.course.grade_cli import Grader, grade_course
from autograder.course.merge import MergeError, merge
from autograder.engine.submission import Submission

pytestmark = pytest.mark.slow

JOBS = "2"
# kinds of diagnosis that name a catalogued mistake (today "mistake"; with case kinds,
# a conceptual mistake or a missing validation)
CATALOGUED = {"mistake", "concept", "validation"}


def _grade(subs: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    p = run_drills("grade", str(subs), "--out", str(out), "--jobs", JOBS, *extra, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return p


def _grade_here(subs: Path, out: Path, **options) -> None:
    """What `drills grade SUBS --out OUT` does, in this process (no interpreter start-up)."""
    grader = Grader(hidden=[out.resolve()])
    grade_course([subs], out, grader, jobs=int(JOBS), **options)


def _run_json(out: Path) -> dict:
    return json.loads((out / "run.json").read_text())


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("course")
    plan = class_fixture.fixture_plan()
    subs = class_fixture.write_class(tmp, plan)
    _grade(subs, tmp / "ref")
    return {"tmp": tmp, "plan": plan, "subs": subs, "ref": tmp / "ref"}


# -- the class report --------------------------------------------------------------------------


def test_class_report_counts_what_the_fixture_class_implies(course):
    """Per function: full marks, not attempted, each catalogued mistake ranked by how many
    students made it, unrecognised failures apart: the counts the fixture plan implies?"""
    body = json.loads((course["ref"] / "report.json").read_text())
    want = class_fixture.expected_counts(course["plan"])
    seen = set()
    for a, rep in body["assignments"].items():
        for f in rep["functions"]:
            exp = want[(a, f["function"])]
            seen.add((a, f["function"]))
            catalogued = [d for d in f["diagnoses"] if d["kind"] in CATALOGUED]
            assert {d["id"]: d["count"] for d in catalogued} == dict(exp["mistakes"]), (a, f)
            counts = [d["count"] for d in f["diagnoses"]]
            assert counts == sorted(counts, reverse=True)  # ranked
            # failures no catalogued mistake explains: unrecognised, or (once error shapes
            # are diagnosed) under an error shape's kind
            shapes = sum(d["count"] for d in f["diagnoses"] if d["kind"] not in CATALOGUED)
            assert (f["full_marks"], f["not_attempted"], f["unrecognised"] + shapes) == (
                exp["full_marks"],
                exp["not_attempted"],
                exp["unrecognised"],
            ), (a, f["function"])
            assert f["could_not_grade"] == 0
    assert seen == set(want)
    a01 = body["assignments"]["01_exact_kl"]
    assert a01["submissions"] == sum(1 for _, a, _ in course["plan"] if a == "01_exact_kl")


def test_class_report_page_shows_the_ranked_mistakes_with_their_diagnosis(course):
    """Does report.html list, under each function, every mistake with its count and its
    diagnosis text, and the unrecognised failures apart?"""
    from autograder import assignments

    page = (course["ref"] / "report.html").read_text()
    body = json.loads((course["ref"] / "report.json").read_text())
    fn = next(
        f for f in body["assignments"]["01_exact_kl"]["functions"] if f["function"] == "forward_kl"
    )
    section = page.split("<code>forward_kl</code>")[1].split("<h3>")[0]
    rows = re.findall(
        r'<tr class="diagnosis" data-id="([^"]+)"[^>]*><td class="n">(\d+)</td>', section
    )
    assert [(i, int(n)) for i, n in rows] == [(d["id"], d["count"]) for d in fn["diagnoses"]]
    top = assignments.get("01_exact_kl").function("forward_kl").mistakes[0]
    assert rows[0] == (top.id, "3")  # made by three students: ranked first
    assert top.diagnosis.split("'")[0][:40] in section.replace("&#x27;", "'")
    shapes = sum(d["count"] for d in fn["diagnoses"] if d["kind"] not in CATALOGUED)
    assert shapes or re.search(r'class="unrecognised"><td class="n">1</td>', section)


def test_class_report_figures_draw_the_counts_of_report_json(course):
    """Is each assignment's figure an inline SVG (one self-contained page) whose bars are the
    total-score counts and whose dots are each function's score counts, as in report.json?
    Catches a figure drawn from other data than the counts the tables show."""
    page = (course["ref"] / "report.html").read_text()
    body = json.loads((course["ref"] / "report.json").read_text())
    figures = re.findall(r'<svg class="figure".*?</svg>', page, re.S)
    assert len(figures) == len(body["assignments"]) == 4  # one per assignment
    for svg, (name, a) in zip(figures, body["assignments"].items()):
        ElementTree.fromstring(svg)  # well-formed XML
        bars = re.findall(r'class="total" data-score="([^"]+)" data-students="(\d+)"', svg)
        assert [(float(s), int(n)) for s, n in bars] == [(s, n) for s, n in a["score_counts"]]
        assert sum(int(n) for _, n in bars) == a["submissions"]
        dots = re.findall(
            r'class="function" data-function="([^"]+)" data-score="([^"]+)" data-students="(\d+)"',
            svg,
        )
        want = [(f["function"], s, n) for f in a["functions"] for s, n in f["score_counts"]]
        assert [(f, float(s), int(n)) for f, s, n in dots] == want, name


# -- exports -----------------------------------------------------------------------------------


def test_canvas_csv_has_one_row_per_student_and_one_column_per_assignment(course):
    """canvas.csv: Canvas's identity columns, a Points Possible row, and each student's
    scores equal to grades.csv's?"""
    rows = list(csv.reader(io.StringIO((course["ref"] / "canvas.csv").read_text())))
    grades = list(csv.DictReader(io.StringIO((course["ref"] / "grades.csv").read_text())))
    names = sorted({g["assignment"] for g in grades})
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *names]
    assert rows[1][0].strip() == "Points Possible"
    by = {(g["student_id"], g["assignment"]): g["score"] for g in grades}
    students = sorted({g["student_id"] for g in grades})
    assert [r[3] for r in rows[2:]] == students
    for r in rows[2:]:
        assert r[5:] == [by[(r[3], a)] for a in names]


# -- resumable runs ----------------------------------------------------------------------------


def _wait_for(what: str, cond, timeout: float = 300.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"waited {timeout:.0f} s for {what}")
        time.sleep(0.02)


# Seed 3 kills during assembly (every result stored); seeds 1 and 2 at a random point. Seed 2
# (one more random point) runs in the sweep (DRILLS_SWEEP=1, `make sweep`).
@pytest.mark.parametrize("seed", [1, 2, 3] if sweep("DRILLS_SWEEP") else [1, 3])
def test_run_killed_at_a_random_point_resumes_to_the_same_gradebook(course, tmp_path, seed):
    """SIGKILL `drills grade` once k results are stored (k random, or all of them: during
    assembly), start it again with the same arguments: does it grade only the missing ones
    and write the uninterrupted run's grades.csv, each row once?"""
    total = len(course["plan"])
    k = random.Random(seed).randint(1, total - 1) if seed < 3 else total
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "autograder.cli", "grade", str(course["subs"])]
    cmd += ["--out", str(out), "--jobs", JOBS]
    env = {k2: v for k2, v in os.environ.items() if not k2.startswith("DRILLS_SECRET")}
    proc = subprocess.Popen(
        cmd, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        _wait_for(
            f"{k} stored results (or the run's end)",
            lambda: results_cache.entry_count(out) >= k or proc.poll() is not None,
        )
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    stored = results_cache.entry_count(out)
    _grade(course["subs"], out)
    assert (out / "grades.csv").read_bytes() == (course["ref"] / "grades.csv").read_bytes()
    stats = _run_json(out)["stats"]
    assert (stats["from_cache"], stats["graded"]) == (stored, total - stored)
    keys = [(r["assignment"], r["student_id"]) for r in csv.DictReader((out / "grades.csv").open())]
    assert len(keys) == len(set(keys))
    assert not [p for p in out.rglob(".*.tmp")]


def test_unreadable_cache_entry_is_regraded_and_force_regrades_all(course, tmp_path):
    """A cache entry cut short: is that one submission regraded (and only it)? With
    --force, is every submission regraded? Same gradebook each time?"""
    out = tmp_path / "out"
    shutil.copytree(course["ref"], out)
    entry = sorted((out / results_cache.CACHE_DIR).glob("??/*.json"))[5]
    entry.write_bytes(entry.read_bytes()[:100])
    _grade_here(course["subs"], out)
    stats = _run_json(out)["stats"]
    assert (stats["graded"], stats["corrupt_cache_entries"]) == (1, 1)
    assert (out / "grades.csv").read_bytes() == (course["ref"] / "grades.csv").read_bytes()
    _grade_here(course["subs"], out, force=True)
    assert _run_json(out)["stats"]["graded"] == len(course["plan"])
    assert (out / "grades.csv").read_bytes() == (course["ref"] / "grades.csv").read_bytes()


def test_second_run_into_the_same_folder_is_refused(course, tmp_path):
    """While one run holds an output folder, is another refused with a clear message?"""
    out = tmp_path / "out"
    fp = results_cache.Fingerprint("g", "c", "s", "r")
    holder = results_cache.ResultsCache(out, fp)
    holder.lock()
    try:
        with pytest.raises(results_cache.CacheBusy, match="another `drills grade`"):
            results_cache.ResultsCache(out, fp).lock()
    finally:
        holder.unlock()
    results_cache.ResultsCache(out, fp).lock()  # free again once the holder is gone


# -- shards and merge --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sharded(course) -> list[Path]:
    outs = []
    for k in (1, 2, 3):
        out = course["tmp"] / f"shard{k}"
        _grade_here(course["subs"], out, shard=(k, 3))
        outs.append(out)
    return outs


def test_three_shards_merged_equal_the_unsharded_run(course, sharded, tmp_path):
    """--shard 1/3, 2/3, 3/3 then `drills merge`: grades.csv byte for byte the unsharded
    one, and the same class report and Canvas CSV?"""
    sizes = [len(_run_json(o)["submissions"]) for o in sharded]
    assert sum(sizes) == len(course["plan"]) and all(sizes)
    p = run_drills("merge", *map(str, sharded), "--out", str(tmp_path / "all"))
    assert p.returncode == 0, p.stderr
    for name in ("grades.csv", "canvas.csv"):
        assert (tmp_path / "all" / name).read_bytes() == (course["ref"] / name).read_bytes(), name
    # the same report, but for the run it names (when, by which version): the merge's own
    merged, ref = (
        json.loads((o / "report.json").read_text()) for o in (tmp_path / "all", course["ref"])
    )
    assert merged.pop("run")["secret_fingerprint"] == ref.pop("run")["secret_fingerprint"]
    assert merged == ref
    ref_pages = sorted(
        p.relative_to(course["ref"]) for p in (course["ref"] / "feedback").rglob("*")
    )
    assert (
        sorted(p.relative_to(tmp_path / "all") for p in (tmp_path / "all" / "feedback").rglob("*"))
        == ref_pages
    )


def _copy_with(src: Path, dest: Path, **changes) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(results_cache.CACHE_DIR))
    body = _run_json(dest)
    body.update(changes)
    (dest / "run.json").write_text(json.dumps(body))
    return dest


def test_merge_refuses_gaps_overlaps_and_shards_of_other_runs(sharded, tmp_path):
    """A missing shard, a shard given twice, the same submission in two shards, a shard
    graded with another secret, a shard whose results are cut short: each refused, saying so?"""
    s1, s2, s3 = map(str, sharded)
    other = json.loads((sharded[0] / "run.json").read_text())["fingerprint"]
    cases = {
        "missing shards: 2/3": [s1, s3],
        "shard 1/3 is given twice": [s1, s1, s2, s3],
        "is in two shards": [s1, str(_copy_with(sharded[0], tmp_path / "c", shard=[2, 3])), s3],
        "not shards of one run": [
            str(_copy_with(sharded[0], tmp_path / "d", fingerprint={**other, "secret": "x"})),
            s2,
            s3,
        ],
    }
    cut = _copy_with(sharded[1], tmp_path / "e")
    lines = (cut / "results.jsonl").read_text().splitlines(keepends=True)
    (cut / "results.jsonl").write_text("".join(lines[:-1]))
    cases["incomplete"] = [s1, str(cut), s3]
    for message, outs in cases.items():
        with pytest.raises(MergeError, match=re.escape(message)):
            merge([Path(o) for o in outs], tmp_path / "merged")
    assert not (tmp_path / "merged" / "grades.csv").exists()
    p = run_drills("merge", s1, s3, "--out", str(tmp_path / "merged"))
    assert p.returncode == 2 and "missing shards: 2/3" in p.stderr


def test_shard_of_a_submission_does_not_change_when_others_are_added():
    """Adding submissions: does every earlier submission stay in its shard (and do N shards
    split any list into disjoint parts that cover it)?"""
    subs = [Submission(Path(f"/x/{i}.ipynb"), f"s{i}", "01_exact_kl") for i in range(200)]
    before = {s.student: shards.shard_of(s, 7) for s in subs[:120]}
    assert {s.student: shards.shard_of(s, 7) for s in subs[:120]} == before
    parts = [shards.select(subs, k, 7) for k in range(1, 8)]
    assert sorted(s.student for p in parts for s in p) == sorted(s.student for s in subs)
    assert all(parts)


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "x", "1-3", ""])
def test_shard_option_rejects_malformed_values(text):
    """Is a --shard that is not K/N with 1 <= K <= N refused with a message?"""
    with pytest.raises(ValueError, match="shard"):
        shards.parse(text)
