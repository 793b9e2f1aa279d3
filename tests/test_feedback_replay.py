"""Feedback that cannot be replayed: the replay submission of tests/replay_attack.py.

A learner submits an attempt that fails every case, reads the feedback, and resubmits a
notebook that returns, call after call, the values the feedback showed. The secret and
the student id are the same on the regrade, so the generated cases get the same inputs
in the same order. Four learners, three `drills grade` runs (04_rlef_turn_rewards, whose
outputs include values a page shows exactly enough to pass):

    m1  replays the page `drills grade` writes now        -> every generated case fails
    m2  replays a page written with --show-hidden           -> some generated cases pass
        (the values feedback used to show: the attack is real)
    m3  replays the exact values of results.json            -> full marks
        (the instructor's file must stay the instructor's)
    m4  submits m3's replay as their own                    -> generated cases fail
        (per-student inputs: a copied table of outputs is worthless)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import replay_attack as ra
from conftest import run_drills

A = "04_rlef_turn_rewards"
SECRET = "replay-secret-5b1e0c"

pytestmark = pytest.mark.slow


def _grade(folder: Path, out: Path, secret: Path, *extra: str) -> dict[str, dict]:
    p = run_drills(
        "grade", str(folder / "submitted"), "--out", str(out), "--jobs", "2",
        "--secret-file", str(secret), *extra, timeout=600,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    lines = (out / "results.jsonl").read_text().splitlines()
    return {item["student"]: item for item in map(json.loads, lines)}


def _passed(item: dict, hidden: bool) -> tuple[int, int]:
    cases = [c for f in item["functions"] for c in f["cases"] if c["hidden"] == hidden]
    return sum(c["passed"] for c in cases), len(cases)


@pytest.fixture(scope="module")
def replays(tmp_path_factory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("replay")
    secret = tmp / "course.secret"
    secret.write_text(SECRET + "\n")
    os.chmod(secret, 0o600)
    first = ra.notebook_returning(A, None)
    for student in ("m1", "m3"):
        ra.write(first, tmp / "first", student, A)
    ra.write(first, tmp / "first-shown", "m2", A)
    now = _grade(tmp / "first", tmp / "out-first", secret)
    _grade(tmp / "first-shown", tmp / "out-shown", secret, "--show-hidden")

    def page(out: str, student: str) -> str:
        return (tmp / out / "feedback" / student / f"{A}.html").read_text()

    tables = {
        "m1": ra.values_from_page(page("out-first", "m1"), A),
        "m2": ra.values_from_page(page("out-shown", "m2"), A),
        "m3": ra.values_from_results(now["m3"]),
    }
    tables["m4"] = tables["m3"]
    for student, table in tables.items():
        ra.write(ra.notebook_returning(A, table), tmp / "again", student, A)
    graded = _grade(tmp / "again", tmp / "out-again", secret)
    graded["_first"] = now["m1"]
    return graded


def test_first_attempt_fails_every_case(replays):
    """Does the NaN attempt fail every case (so its feedback lists them all, in order)?"""
    item = replays["_first"]
    assert _passed(item, hidden=True)[0] == 0 and _passed(item, hidden=False)[0] == 0


def test_replay_of_todays_feedback_fails_every_generated_case(replays):
    """Replaying the feedback page `drills grade` writes: does every generated case fail,
    while the fixed cases (public numbers) may pass?"""
    passed, total = _passed(replays["m1"], hidden=True)
    assert total > 0 and passed == 0
    assert _passed(replays["m1"], hidden=False)[0] > 0  # the replay did run and use the page


def test_replay_of_feedback_showing_values_passes_generated_cases(replays):
    """With values shown (--show-hidden, the old feedback), does the same replay pass
    generated cases it never computed? (The attack the hiding prevents is real.)"""
    assert _passed(replays["m2"], hidden=True)[0] > 0
    assert replays["m2"]["score"] > replays["m1"]["score"]


def test_replay_of_exact_values_gets_full_marks(replays):
    """Replaying results.json's exact values: full marks without computing anything, which
    is why those values stay in the instructor's results.json and out of feedback."""
    item = replays["m3"]
    assert item["score"] == item["max_score"] > 0


def test_copied_replay_fails_generated_cases_of_another_student(replays):
    """m3's perfect replay handed in by m4: do m4's own generated inputs make it fail?"""
    passed, total = _passed(replays["m4"], hidden=True)
    assert passed < total
    assert _passed(replays["m4"], hidden=False) == _passed(replays["m3"], hidden=False)
    assert replays["m4"]["score"] < replays["m3"]["score"]
