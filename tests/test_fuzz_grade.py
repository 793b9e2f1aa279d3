"""Fuzzing `drills grade` and `drills check` with generated malformed and hostile submissions.

The strategies are in tests/fuzz_submissions.py. Invariants of every generated class run:
the run ends normally, grades.csv has one row per submission, every output parses (CSV,
JSON, JSON lines, HTML as UTF-8), and a rerun — from a full results cache, and from one
with half its entries gone (a run killed half way) — writes a byte-identical grades.csv.

Two slices run here, fixed-seed (derandomised) and bounded so that they take seconds:

- parent side: damaged notebooks whose "child" is :func:`fuzz_submissions.fake_execute`
  (records as a hostile child would write them, through the sandbox's own checks), so that
  reading, validating, building, decoding, scoring, rendering and caching see far more
  cases per second than real children allow;
- child side: hostile learner code run in real sandboxed children by `drills grade`.

benchmarks/fuzz_grade.py runs the same properties on thousands of submissions.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import random
import subprocess
import tempfile
from pathlib import Path

import fuzz_submissions as fz
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder import cli
from autograder.course import grade_cli, results_cache

FUZZ_SETTINGS = fz.FUZZ_SETTINGS
_GRADER: list[grade_cli.Grader] = []


def parent_grader() -> grade_cli.Grader:
    """One in-process grader (no warm workers: the sandbox is faked) for every example."""
    if not _GRADER:
        # per_student=False: every student gets the same cases (as `drills check` does), so
        # each example spends its time on the damage, not on drawing a student's inputs
        _GRADER.append(grade_cli.Grader(warm=False, per_student=False))
    return _GRADER[0]


def grade_class_in_process(
    files: list[bytes], grader: grade_cli.Grader, tally=None, rerun: bool = True
) -> None:
    """Grade ``files`` with the fake sandbox, rerun from a full and a half-emptied results
    cache, and assert the invariants of every run (the property of the parent side).
    ``tally`` (benchmarks/fuzz_grade.py) counts the rows and the error rows; without
    ``rerun`` the class is graded once."""
    with tempfile.TemporaryDirectory(prefix="drills-fuzz-") as tmp:
        names = fz.write_class(Path(tmp) / "class", files)
        out = Path(tmp) / "out"
        with fz.fake_sandbox():
            stats = grade_cli.grade_course(
                [Path(tmp) / "class"], out, grader, assignment=fz.ASSIGNMENT
            )
            assert stats.submissions == len(files)
            rows = fz.check_outputs(out, names)
            if tally is not None:
                tally.rows += len(rows)
                tally.errors_of(out)
            if not rerun:
                return
            first = (out / "grades.csv").read_bytes()
            again = grade_cli.grade_course(
                [Path(tmp) / "class"], out, grader, assignment=fz.ASSIGNMENT
            )
            # (only notebooks that cannot be read are graded again: they have no cache entry)
            assert again.from_cache == first_run_cached(out)
            assert (out / "grades.csv").read_bytes() == first
            entries = sorted((out / results_cache.CACHE_DIR).glob("??/*.json"))
            for p in entries[::2]:
                p.unlink()
            grade_cli.grade_course([Path(tmp) / "class"], out, grader, assignment=fz.ASSIGNMENT)
            assert (out / "grades.csv").read_bytes() == first, "a resumed run changed grades.csv"
            fz.check_outputs(out, names)


def first_run_cached(out: Path) -> int:
    return results_cache.entry_count(out)


def check_in_process(path: Path, as_json: bool) -> tuple[int, str, str]:
    """`drills check` (its command function, fake sandbox): exit status, stdout, stderr."""
    argv = ["check", str(path), "--assignment", fz.ASSIGNMENT, "--timeout", "5"]
    args = cli.build_parser().parse_args(argv + (["--json"] if as_json else []))
    out, err = io.StringIO(), io.StringIO()
    with fz.fake_sandbox(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = grade_cli._check_cmd(args)
    return rc, out.getvalue(), err.getvalue()


@settings(max_examples=6, **FUZZ_SETTINGS)
@given(st.lists(fz.submission_bytes("parent"), min_size=4, max_size=20))
def test_damaged_notebooks_and_hostile_child_records_never_stop_a_class_run(files):
    """Notebooks with damaged JSON, odd metadata, hostile text and bytes, whose child sends
    surrogates, huge integers, deep nests and unknown forms: does every run end with one
    row per submission, parseable outputs and a byte-identical grades.csv when resumed?"""
    grade_class_in_process(files, parent_grader())


@settings(max_examples=12, **FUZZ_SETTINGS)
@given(fz.submission_bytes("parent"), st.booleans())
def test_drills_check_answers_every_damaged_notebook_with_a_sentence(raw, as_json):
    """`drills check` on a damaged or hostile notebook: exit 0 with feedback (JSON that
    parses, with --json), or exit 2 with a message; never an exception?"""
    with tempfile.TemporaryDirectory(prefix="drills-fuzz-") as tmp:
        path = Path(tmp) / "work.ipynb"
        path.write_bytes(raw)
        rc, out, err = check_in_process(path, as_json)
    assert rc in (0, 2), (rc, err)
    if rc == 2:
        assert err.strip().startswith(("drills check:", "note:")), err
    elif as_json:
        body = json.loads(out)
        assert 0.0 <= body["score"] <= body["max_score"]
    else:
        assert "Total:" in out


@pytest.mark.slow
@settings(max_examples=1, **FUZZ_SETTINGS)
@given(st.integers(0, 2**32).map(random.Random))
def test_hostile_learner_code_in_real_children_never_stops_a_class_run(rnd):
    """Learner functions that return generators, object arrays, lying subclasses, objects
    whose __repr__ raises, huge or deep values, text with surrogates, or raise odd
    exceptions, run by `drills grade --jobs 2`: exit 0, no traceback, one row each,
    parseable outputs, and a byte-identical grades.csv on the rerun?"""
    files = fz.hostile_class(rnd, 10)
    with tempfile.TemporaryDirectory(prefix="drills-fuzz-") as tmp:
        names = fz.write_class(Path(tmp) / "class", files)
        out = Path(tmp) / "out"
        cmd = fz.grade_command(Path(tmp) / "class", out, jobs=2)
        env = dict(os.environ)
        env.pop("DRILLS_SECRET", None)
        first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        assert first.returncode == 0, first.stderr[-3000:]
        assert "Traceback" not in first.stderr
        fz.check_outputs(out, names)
        csv_bytes = (out / "grades.csv").read_bytes()
        again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        assert again.returncode == 0, again.stderr[-3000:]
        assert (out / "grades.csv").read_bytes() == csv_bytes


def test_a_file_name_that_is_not_utf8_is_graded_and_the_run_goes_on(tmp_path):
    """A notebook whose file name holds the byte 0xFF (a surrogate escape in Python's str)
    used to stop the run in the inputs digest and the cache key: is it graded, beside the
    others, with a row, and does the rerun give a byte-identical grades.csv?"""
    folder = tmp_path / "class"
    folder.mkdir()
    good = json.dumps(fz.BASE).encode("utf-8")
    (folder / "plain.ipynb").write_bytes(good)
    with open(os.fsencode(folder) + b"/st\xffu.ipynb", "wb") as f:
        f.write(good)
    out = tmp_path / "out"
    with fz.fake_sandbox():
        grade_cli.grade_course([folder], out, parent_grader(), assignment=fz.ASSIGNMENT)
        fz.check_outputs(out, ["plain", "st_u"])
        first = (out / "grades.csv").read_bytes()
        grade_cli.grade_course([folder], out, parent_grader(), assignment=fz.ASSIGNMENT)
    assert (out / "grades.csv").read_bytes() == first
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    [odd] = [s for s in results["submissions"] if s["student"] == "st_u"]
    assert "\ufffd" in odd["path"] and odd["error"] is None


_ASSIGNMENTS = ["01_exact_kl", "02_clipped_estimators", "03_sum_vs_mean", "04_rlef_turn_rewards"]


def score_and_render(assignment: str, name: str, records: list[str]) -> None:
    """What the parent does with one function's records from a child, for any assignment:
    check them (the sandbox's own checks), clean them (the boundary), score against the
    reference, and render every output of the result."""
    from autograder.course import report
    from autograder.engine import sandbox
    from autograder.scoring import evaluate

    grader = parent_grader()
    prep = grader.prepare(assignment)
    inputs = prep.shared.inputs[name]
    got = []
    for i in range(len(inputs)):
        try:
            rec = sandbox.parse_line(
                ('{"o": ' + records[i % len(records)] + "}").encode("utf-8", "surrogatepass")
            )
            got.append(sandbox.validate_outcome(rec["o"]))
        except sandbox.ProtocolError as e:
            got.append({"raised": sandbox.INVALID, "message": str(e)})
    ex = sandbox.Execution(functions={name: sandbox.FunctionRun(name, got, [0.0] * len(got))})
    got = grade_cli._clean_execution(ex).functions[name].outcomes
    fr = evaluate.score(
        assignment,
        prep.specs[name],
        prep.points[name],
        inputs,
        prep.shared.expected[name],
        got,
        None,
        prep.shared.mutants[name],
    )
    assert 0.0 <= fr.score <= prep.points[name]
    res = report.SubmissionResult("s", assignment, "s.ipynb", prep.max_score, functions=[fr])
    json.dumps(res.to_json(show_hidden=True), ensure_ascii=False, allow_nan=False).encode()
    json.dumps(fr.to_json(for_learner=True), allow_nan=False)
    report.feedback_html(res, show_hidden=True).encode("utf-8")
    report.feedback_html(res).encode("utf-8")
    evaluate.feedback_text(fr, show_hidden=True).encode("utf-8")


@settings(max_examples=40, **FUZZ_SETTINGS)
@given(
    st.sampled_from(_ASSIGNMENTS).flatmap(
        lambda a: st.tuples(st.just(a), st.sampled_from(parent_grader().prepare(a).names))
    ),
    st.data(),
)
def test_any_record_a_child_can_send_is_scored_and_rendered_for_every_assignment(which, data):
    """Outcomes a hostile child can send (valid or not: surrogates, huge integers, deep
    nests, objects and arrays of odd shapes), against the reference of every function of
    01-04 (or near misses of the reference's own outcomes): scored within the function's
    points, and written by every writer?"""
    expected = parent_grader().prepare(which[0]).shared.expected[which[1]]
    records = data.draw(
        st.one_of(st.lists(fz.outcome_record(), min_size=1, max_size=4), fz.records_near(expected))
    )
    score_and_render(*which, records)


def test_a_setup_failure_under_a_course_secret_is_reported_not_an_index_error(tmp_path):
    """With a course secret the fixed and the generated cases run apart; when the setup
    cells fail, each part has no outcomes. Is the row's feedback the setup failure, not
    "the grader failed on this submission: IndexError" (what the fuzzer found)?"""
    nb = copy.deepcopy(fz.BASE)
    cell = nb["cells"][fz.SOLUTION_CELLS["forward_kl"]]
    blob = {"outcomes": ['{"value": 0.5}'], "setup_error": "MemoryError: importing numpy"}
    cell["source"] = "".join(cell["source"]) + "\n" + fz.blob_line(blob)
    (tmp_path / "s.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    grader = grade_cli.Grader(secret="a-course-secret", warm=False)
    with fz.fake_sandbox():
        [res] = grader.grade(
            [grade_cli.submission.Submission(tmp_path / "s.ipynb", "s", fz.ASSIGNMENT)]
        )
    assert res.error is None
    for f in res.functions:
        assert f.error.startswith("the setup cells failed in the sandbox: MemoryError"), f.error
