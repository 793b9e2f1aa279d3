"""The misbehaving-submission corpus (tests/fixtures/corpus/) through `drills grade`.

Three `drills grade --jobs 2` runs grade the fixtures: the main one with a short step
timeout, then the two fixtures that import torch with a longer one (TORCH_IMPORTERS), then
the two that spend their whole time budget with a budget of their own (BUDGET_BOUND); the
tests then read what the three wrote. Each fixture is exercises/01_exact_kl with the reference solution except
for the defect its name says; expected.json holds the expected points per
function. The run must not crash, every fixture must have its row, and nothing
outside the child's temporary folder may change.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import load_factor, run_drills

from autograder.course import results_cache
from autograder.engine import sandbox

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
SECRET = "corpus-secret-3f9a1c77e2b84d05"
# The corpus is graded in three `drills grade` runs, one after the other (run side by side,
# monkeypatch scored wrong once in three runs: its torch import, slowed by the other run's
# children, overran its step timeout). Each run's step timeout and time budget are scaled by
# the load when the run starts (conftest.load_factor), so that a healthy step or submission
# is not stopped on a busy machine; a budget stays at most 45 s.
# - The main run: every fixture but the four below, with a step timeout of 2 s on a quiet
#   machine and the 10 s of 5 step timeouts. Its healthy steps take milliseconds; its infinite
#   loops burn a core until the step timeout stops them, in each of the two runs a secret
#   makes, so the timeout is kept short (infinite_loop: 10.3 s of child time at 5 s, 4.3 s at
#   2 s; the whole run 41 s at 5 s, 25 s at 2 s, quiet). The fork bomb's 10 s does not depend
#   on it.
# - TORCH_IMPORTERS: the two fixtures whose cell imports torch (3.5-4 s measured at a load of
#   3 on 2 cores; it passed 5 s at a load of 17), with 5 s and 25 s.
# - BUDGET_BOUND: the two fixtures whose every call takes 2.5 s (inside the 5 s step timeout)
#   spend whatever budget they get, in each of the two runs a secret makes: 4 x 45 s of the
#   run's time under `make test`'s own load. Their run has a budget of 3 s that does not grow
#   with the load: scored 0 whatever happens, they need only run out of it, which they do
#   within log_ratios' first two calls (or before its first, on a machine so busy that
#   starting the child takes 3 s; expected.json's case_says holds either way). It was 6 s,
#   three calls, until 2026-12-03: the third call showed nothing the second does not.
#   `drills check` stops them at a budget of 2 s (test_drills_check_stops_a_slow_submission...).
STEP_TIMEOUT, BUDGET = 2.0, 10.0
TORCH_IMPORTERS, TORCH_STEP_TIMEOUT, TORCH_BUDGET = (
    ("monkeypatch", "numpy_torch_scalars"),
    5.0,
    25.0,
)
BUDGET_BOUND, BUDGET_BOUND_S = ("sleeps_in_every_call", "recurses_in_every_call"), 3.0
MAX_LOAD_FACTOR, MAX_BUDGET = 3.0, 45.0
SKIP_DIRS = {
    ".venv",
    ".git",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    "node_modules",
    ".ipynb_checkpoints",
    # What other test files write into the checkout while this one runs beside them on
    # another `make test` worker: the browser test's screenshots and timings, hypothesis's
    # example database (tests/test_fuzz_grade.py). No corpus fixture targets either.
    "test-artifacts",
    ".hypothesis",
}

pytestmark = [
    pytest.mark.slow,
    # Without bubblewrap the vandal and snoop fixtures would reach this machine's files:
    # test_grade_reduced.py covers what the limits alone must contain.
    pytest.mark.skipif(
        sandbox.detect([]).mode != "bwrap", reason="needs a working bubblewrap (bwrap)"
    ),
]


def tree_digest(root: Path, skip: set[str] = SKIP_DIRS) -> dict[str, str]:
    """Path -> sha256 of every file under ``root`` (the folders in ``skip`` left out)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for f in files:
            p = Path(folder) / f
            if p.is_symlink() or not p.is_file():
                continue
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Name -> (size, mtime) of the entries of a folder (site-packages is too big to hash)."""
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("corpus")
    f = load_factor(cap=MAX_LOAD_FACTOR)
    secret_file = tmp / "course-secret.txt"
    secret_file.write_text(SECRET + "\n")
    os.chmod(secret_file, 0o600)
    out = tmp / "out"
    out.mkdir()
    (out / "canary.txt").write_text("the grader must leave this file alone\n")
    site = [p for p in sandbox.library_dirs()]
    before = {
        "course": tree_digest(REPO),
        "package": tree_digest(sandbox.grader_dir()),
        "site": [listing(p) for p in site],
        "out": tree_digest(out),
        "secret": secret_file.read_bytes(),
    }
    env = dict(
        os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    )
    env.pop("DRILLS_SECRET", None)
    out_torch, out_budget = tmp / "out-torch", tmp / "out-budget"
    notebooks = sorted(CORPUS.glob("*.ipynb"))
    apart = set(TORCH_IMPORTERS) | set(BUDGET_BOUND)
    runs = {  # output folder -> (its notebooks, its step timeout, its budget)
        out: (
            [p for p in notebooks if p.stem not in apart],
            STEP_TIMEOUT * f,
            min(BUDGET * f, MAX_BUDGET),
        ),
        out_torch: (
            [CORPUS / f"{n}.ipynb" for n in TORCH_IMPORTERS],
            TORCH_STEP_TIMEOUT * f,
            min(TORCH_BUDGET * f, MAX_BUDGET),
        ),
        out_budget: (
            [CORPUS / f"{n}.ipynb" for n in BUDGET_BOUND],
            TORCH_STEP_TIMEOUT * f,
            BUDGET_BOUND_S,
        ),
    }
    done = {}
    for where, (paths, step_timeout, run_budget) in runs.items():
        done[where.name] = subprocess.run(
            [
                sys.executable,
                "-m",
                "autograder.cli",
                "grade",
                *map(str, paths),
                "--out",
                str(where),
                "--assignment",
                EXPECTED["assignment"],
                "--jobs",
                "2",
                "--timeout",
                str(step_timeout),
                "--budget",
                str(run_budget),
                "--memory",
                "1024",
                "--secret-file",
                str(secret_file),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp,
            timeout=600,
        )
    after = {
        "course": tree_digest(REPO),
        "package": tree_digest(sandbox.grader_dir()),
        "site": [listing(p) for p in site],
        "secret": secret_file.read_bytes(),
    }
    results, rows = None, []
    for where in runs:
        if (where / "results.json").exists():
            part = json.loads((where / "results.json").read_text())
            if results is None:
                results = part
            else:
                results["submissions"] += part["submissions"]
        if (where / "grades.csv").exists():
            with (where / "grades.csv").open(newline="") as f:
                rows += list(csv.DictReader(f))
    yield {
        "procs": done,
        "out": out,
        "outs": {where: [p.stem for p in paths] for where, (paths, *_) in runs.items()},
        "before": before,
        "after": after,
        "results": results,
        "rows": rows,
    }
    shutil.rmtree(tmp, ignore_errors=True)


def _submission(run, name):
    return next(s for s in run["results"]["submissions"] if s["student"] == name)


def test_corpus_run_finishes_without_crashing(corpus_run):
    """Does grading every misbehaving submission end normally (all three runs)?"""
    for key, proc in corpus_run["procs"].items():
        assert proc.returncode == 0, (key, proc.stderr[-3000:])
        assert "Traceback" not in proc.stderr, key


def test_corpus_every_submission_has_its_row(corpus_run):
    """Is there exactly one grades.csv row per fixture, even for broken notebooks?"""
    students = sorted(r["student_id"] for r in corpus_run["rows"])
    assert students == sorted(EXPECTED["submissions"])
    assert {r["assignment"] for r in corpus_run["rows"]} == {EXPECTED["assignment"]}


@pytest.mark.parametrize("name", sorted(EXPECTED["submissions"]))
def test_corpus_scores_match_expected(corpus_run, name):
    """Does each misbehaving submission get exactly the points the corpus says, per function?"""
    exp = EXPECTED["submissions"][name]
    sub = _submission(corpus_run, name)
    got = {f["function"]: f["score"] for f in sub["functions"]}
    assert got == exp["scores"], (
        name,
        [(f["function"], f["error"]) for f in sub["functions"]],
        sub["child"]["notes"],
    )
    row = next(r for r in corpus_run["rows"] if r["student_id"] == name)
    if sub.get("error"):  # could not be graded: no grade exported (an empty cell), not a 0
        assert row["score"] == "" and exp["total"] == 0, (name, sub["error"])
    else:
        assert float(row["score"]) == pytest.approx(exp["total"], abs=1e-9)
    assert float(row["max_score"]) == 7.0
    fns = {f["function"]: f for f in sub["functions"]}
    for fn, verdicts in exp.get("verdicts", {}).items():
        by_id = {c["id"]: c["verdict"] for c in fns[fn]["cases"]}
        for case_id, v in verdicts.items():
            assert by_id[case_id] == v, (fn, case_id, by_id[case_id])
    for fn, raised in exp.get("got_raised", {}).items():
        by_id = {c["id"]: c["got"].get("raised") for c in fns[fn]["cases"]}
        for case_id, r in raised.items():
            # a list: any of these (the fork bomb meets the process limit, BlockingIOError,
            # or on a loaded machine its step timeout first; it scores 0 either way)
            assert by_id[case_id] in (r if isinstance(r, list) else [r]), (fn, case_id)
    for fn, text in exp.get("case_says", {}).items():  # some case's outcome message says it
        said = [str(c["got"].get("message")) for c in fns[fn]["cases"]]
        assert any(text in m for m in said), (fn, text, said[:3])
    for fn, text in exp.get("function_error", {}).items():
        assert text in (fns[fn]["error"] or ""), fns[fn]["error"]
    if "error" in exp:
        assert exp["error"] in (sub["error"] or "")
    if "warning" in exp:
        assert any(exp["warning"] in w for w in sub["warnings"]), sub["warnings"]


def test_corpus_changes_nothing_outside_the_child_folder(corpus_run):
    """After vandalising, snooping and crashing children: are the course folder, the grader's
    package, the installed packages, the secret and the output folder's own files untouched?"""
    before, after = corpus_run["before"], corpus_run["after"]
    changed = sorted(
        k
        for k in set(before["course"]) | set(after["course"])
        if before["course"].get(k) != after["course"].get(k)
    )
    assert changed == []
    assert before["package"] == after["package"]
    assert before["site"] == after["site"]
    assert before["secret"] == after["secret"]
    assert tree_digest(corpus_run["out"])["canary.txt"] == before["out"]["canary.txt"]
    outputs = ["grades.csv", "results.json", "results.jsonl", "run.json", "canvas.csv"]
    for out, names in corpus_run["outs"].items():
        written = {
            str(p.relative_to(out))
            for p in out.rglob("*")
            if p.is_file() and results_cache.CACHE_DIR not in p.parts
        }
        expected = {*outputs, "report.html", "report.json"} | {
            f"feedback/{n}/{EXPECTED['assignment']}.html" for n in names
        }
        if out == corpus_run["out"]:
            expected.add("canary.txt")
        assert written == expected, out.name
        # the results cache holds one entry per notebook it could read, and nothing else
        cached = {
            p.relative_to(out / results_cache.CACHE_DIR).parts[0] == "lock" or p.suffix == ".json"
            for p in (out / results_cache.CACHE_DIR).rglob("*")
            if p.is_file()
        }
        assert cached == {True}, out.name


def test_corpus_outputs_never_contain_the_secret(corpus_run):
    """Could a submission that hunts for the course secret get it into the grader's outputs?"""
    for out in corpus_run["outs"]:
        for p in out.rglob("*"):
            if p.is_file():
                assert SECRET not in p.read_text(errors="replace"), p


def test_corpus_lone_surrogates_reach_every_output_as_replacement_characters(corpus_run):
    """A learner's value and exception message holding a lone surrogate (which used to stop
    the run with UnicodeEncodeError): are they in results.json as U+FFFD, and does every
    output of the run read as strict UTF-8?"""
    returned = _submission(corpus_run, "returns_lone_surrogate")
    fk = next(f for f in returned["functions"] if f["function"] == "forward_kl")
    story = next(c for c in fk["cases"] if c["id"] == "story")
    assert story["got"] == {"value": "kl \ufffd"}
    raised = _submission(corpus_run, "raises_lone_surrogate")
    fk = next(f for f in raised["functions"] if f["function"] == "forward_kl")
    story = next(c for c in fk["cases"] if c["id"] == "story")
    assert story["got"] == {"raised": "RuntimeError", "message": "bad \ufffd value"}
    for out in corpus_run["outs"]:
        for p in out.rglob("*"):
            if p.is_file() and results_cache.CACHE_DIR not in p.parts:
                p.read_bytes().decode("utf-8")


def test_corpus_floods_are_truncated(corpus_run):
    """Are megabytes of learner output cut to a bounded excerpt in results.json?"""
    for name in ("output_flood_print", "output_flood_fd"):
        child = _submission(corpus_run, name)["child"]
        assert 0 < len(child["stdout"]) <= sandbox.Limits().output_chars
        assert len(child["stderr"]) <= sandbox.Limits().output_chars


def test_corpus_runs_in_bubblewrap_when_installed(corpus_run):
    """With bwrap on the machine, is it used (and no reduced-isolation warning given)?"""
    iso = corpus_run["results"]["isolation"]
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed here")
    assert iso["mode"] == "bwrap", iso["warnings"]


def _pids_cgroup_available() -> bool:
    """Can this process make a pids cgroup? (The probe's cgroup is removed again.)"""
    if os.geteuid() != 0:
        return False
    probe = sandbox.resources._pids_cgroup(8)
    sandbox.resources._release_cgroup(probe)
    return probe is not None


@pytest.mark.skipif(not _pids_cgroup_available(), reason="needs root and a pids cgroup")
def test_fork_bomb_in_a_root_child_is_held_by_a_pids_cgroup(tmp_path):
    """When the child cannot run as another uid (root's Python unreadable to others), the
    kernel ignores RLIMIT_NPROC: does the pids cgroup still stop a fork bomb, scoring it as
    the corpus says and leaving no cgroup behind?"""
    before = {p.name for p in sandbox.resources._CGROUP_BASES[0].glob("drills-*")}
    out = tmp_path / "out"
    p = run_drills(
        "grade",
        str(CORPUS / "fork_bomb.ipynb"),
        "--out",
        str(out),
        "--timeout",
        "5",
        "--secret-file",
        str(_secret(tmp_path)),
        timeout=300,
        DRILLS_SANDBOX_UID="keep",
    )
    assert p.returncode == 0, p.stderr[-2000:]
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert [r["student_id"] for r in rows] == ["fork_bomb"]
    want = EXPECTED["submissions"]["fork_bomb"]["scores"]
    results = json.loads((out / "results.json").read_text())
    got = {f["function"]: f["score"] for f in results["submissions"][0]["functions"]}
    assert got == want
    assert _cgroups_that_stay(before) == set()


def _cgroups_that_stay(before: set[str], wait_s: float = 120.0) -> set[str]:
    """The drills-* cgroups made since ``before`` that do not go away. Our run has ended, so
    one of its own still there is left behind for good; but another grading run on this
    machine (a second pytest, a `drills grade`) makes and removes its own while we look.
    Only a cgroup present at every look until all are gone (or ``wait_s`` is up) counts."""
    base = sandbox.resources._CGROUP_BASES[0]
    stay = {p.name for p in base.glob("drills-*")} - before
    deadline = time.monotonic() + wait_s
    while stay and time.monotonic() < deadline:
        time.sleep(0.2)  # between looks; returns as soon as none is left
        stay &= {p.name for p in base.glob("drills-*")}
    return stay


def _secret(tmp: Path) -> Path:
    f = tmp / "secret.txt"
    f.write_text(SECRET + "\n")
    return f


def test_corpus_feedback_pages_show_no_generated_input(corpus_run):
    """Does any feedback page show a number of one of its student's generated inputs
    (in a quoted message, a value, an error shape's factor or size), which a regrade with the
    same secret would let the learner replay? leaks_generated_inputs and
    reads_generated_inputs_via_gc try on purpose."""
    import leak_probe

    a = EXPECTED["assignment"]
    for out, names in corpus_run["outs"].items():
        for name in names:
            page = (out / "feedback" / name / f"{a}.html").read_text()
            assert leak_probe.leaked(page, leak_probe.generated_digits(a, SECRET, name)) == [], name


@pytest.mark.parametrize("name", ["sleeps_in_every_call", "recurses_in_every_call"])
def test_drills_check_stops_a_slow_submission_at_its_time_budget(name):
    """`drills check` on a submission that sleeps or recurses in every call (each call inside
    the step timeout): does it end normally with every function at 0 and tell the learner
    the time budget ran out, as `drills grade` does? The budget (2 s) ends the first call
    (2.5 s), well inside the step timeout (5 s): only the budget can stop it there."""
    p = run_drills(
        "check",
        str(CORPUS / f"{name}.ipynb"),
        "--assignment",
        EXPECTED["assignment"],
        "--timeout",
        "5",
        "--budget",
        "2",
        "--json",
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    body = json.loads(p.stdout)
    assert [f["score"] for f in body["functions"]] == [0.0, 0.0, 0.0]
    assert any(sandbox.BUDGET_EXHAUSTED in w for w in body["warnings"]), body["warnings"]
