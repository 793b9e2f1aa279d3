"""What `drills grade` writes besides grades.csv: canvas.csv, results.json(l), the class report."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from autograder.course import course_report, report
from autograder.course.exports import canvas
from autograder.course.report import Row, SubmissionResult
from autograder.scoring.evaluate import CaseResult, FunctionResult

A, B = "01_exact_kl", "03_sum_vs_mean"
ROWS = [
    Row(A, "alice", "", 7.0, 7.0),
    Row(A, "bob", "", 2.5, 7.0),
    Row(B, "alice", "", 0.0, 7.0, submitted=False),
    Row(B, "bob", "", 6.0, 7.0),
    Row(A, "zoe", "", 1.0, 7.0),
]


def _csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_canvas_csv_without_roster_uses_the_student_id_as_login():
    """No roster: Canvas's identity columns with the student id as name and login, one
    column per assignment, a Points Possible row, a missing submission as an empty cell?"""
    rows = _csv(canvas.canvas_csv(ROWS))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", A, B]
    assert rows[1] == ["    Points Possible", "", "", "", "", "7.0", "7.0"]
    assert rows[2:] == [
        ["alice", "", "", "alice", "", "7.0", ""],
        ["bob", "", "", "bob", "", "2.5", "6.0"],
        ["zoe", "", "", "zoe", "", "1.0", ""],
    ]


def test_canvas_csv_with_roster_maps_students_and_reuses_assignment_columns(tmp_path):
    """A Canvas export as roster: students matched by login (then SIS id), Canvas's own
    names, ids and sections kept, the export's "Name (id)" column reused, a roster student
    without a grade left blank, a graded student not on the roster reported?"""
    export = tmp_path / "export.csv"
    export.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Quiz 1 (11),01_exact_kl (1234)\n"
        "    Points Possible,,,,,10.00,7.00\n"
        '"Lovelace, Ada",501,S-1,alice,Sec A,9,\n'
        '"Babbage, Charles",502,bob,cbabbage,Sec B,7,\n'
        '"Student, Test",503,,test1,Sec A,,\n'
    )
    roster = canvas.read_roster(export)
    rows = _csv(canvas.canvas_csv(ROWS, roster))
    assert rows[0] == [*canvas.IDENTITY, "01_exact_kl (1234)", B]
    assert rows[2] == ["Lovelace, Ada", "501", "S-1", "alice", "Sec A", "7.0", ""]
    assert rows[3] == ["Babbage, Charles", "502", "bob", "cbabbage", "Sec B", "2.5", "6.0"]
    assert rows[4] == ["Student, Test", "503", "", "test1", "Sec A", "", ""]
    assert rows[5] == ["zoe", "", "", "zoe", "", "1.0", ""]
    assert roster.unmatched == ["zoe"]


def test_roster_that_is_not_a_canvas_export_is_refused(tmp_path):
    """A CSV without Canvas's identity columns: refused, naming what is missing?"""
    bad = tmp_path / "grades.csv"
    bad.write_text("student_id,score\nalice,7\n")
    with pytest.raises(canvas.RosterError, match="SIS Login ID"):
        canvas.read_roster(bad)


# -- a grade that could not be computed is not a 0 ----------------------------------------------

UNGRADABLE = [
    Row(A, "real_zero", "t1", 0.0, 7.0),
    Row(A, "truncated", "t2", 0.0, 7.0, graded=False),
    Row(A, "absent", "", 0.0, 7.0, submitted=False),
    Row("unknown", "stray", "", 0.0, 0.0, graded=False),
]


def test_an_ungradable_or_missing_notebook_exports_an_empty_cell_not_a_zero():
    """A truncated notebook (could not be graded) and a missing one: empty score cells in
    grades.csv and canvas.csv, while a real zero stays 0.0; a notebook of no known assignment
    makes no Canvas column (an import would create an assignment) but keeps its row?"""
    grades = {
        r["student_id"]: r for r in csv.DictReader(io.StringIO(report.gradebook_csv(UNGRADABLE)))
    }
    assert grades["real_zero"]["score"] == grades["real_zero"]["raw_score"] == "0.0"
    for who in ("truncated", "absent", "stray"):
        assert grades[who]["score"] == grades[who]["raw_score"] == "", who
    assert grades["truncated"]["max_score"] == "7.0" and grades["truncated"]["timestamp"] == "t2"
    rows = _csv(canvas.canvas_csv(UNGRADABLE))
    assert rows[0] == [*canvas.IDENTITY, A]
    assert {r[0]: r[5:] for r in rows[2:]} == {
        "absent": [""],
        "real_zero": ["0.0"],
        "stray": [""],
        "truncated": [""],
    }


def test_a_result_with_an_error_is_a_row_without_a_grade():
    """Row.of: a result whose error says it could not be graded has no grade to export?"""
    bad = SubmissionResult("s", A, "p", 7.0, error="s.ipynb is not valid JSON")
    assert not report.Row.of(bad).has_grade
    assert report.Row.of(SubmissionResult("s", A, "p", 7.0)).has_grade


def _gradescope_root(tmp_path, monkeypatch, result: dict | None, returncode: int = 0):
    """A Gradescope /autograder laid out in tmp_path, `drills grade` replaced by a stand-in that
    exits with ``returncode`` after writing ``result`` (None: nothing) as its results.jsonl."""
    import subprocess

    from autograder.course.exports import gradescope

    root = tmp_path / "autograder"
    for d in ("source", "submission", "results"):
        (root / d).mkdir(parents=True)
    (root / "source" / gradescope.CONFIG).write_text(
        json.dumps({"assignment": A, "visibility": "visible", "timeout": 5.0})
    )
    (root / "submission" / "mine.ipynb").write_text("{}")
    (root / "results" / "results.json").write_text('{"score": 7.0}')  # a stale one

    def fake_grade(cmd, **kwargs):
        out = Path(cmd[cmd.index("--out") + 1])
        out.mkdir(parents=True, exist_ok=True)
        if result is not None:
            (out / "results.jsonl").write_text(json.dumps(result) + "\n")
        return subprocess.CompletedProcess(cmd, returncode, "log", "")

    monkeypatch.setattr(gradescope.subprocess, "run", fake_grade)
    return root


def _item(error: str | None) -> dict:
    return SubmissionResult("s", A, "p", 7.0, error=error).to_json()


@pytest.mark.parametrize(
    "failure",
    ["drills grade exits 1", "no result", "the grader failed on this submission: KeyError: 'x'"],
)
def test_a_grader_failure_on_gradescope_is_a_failed_run_not_a_zero(tmp_path, monkeypatch, failure):
    """The grader itself fails: is there no results.json (Gradescope then reports the run as
    failed) and a non-zero exit, instead of a 0 for the student?"""
    from autograder.course.exports import gradescope

    if failure == "drills grade exits 1":
        root = _gradescope_root(tmp_path, monkeypatch, _item(None), returncode=1)
    elif failure == "no result":
        root = _gradescope_root(tmp_path, monkeypatch, None)
    else:
        root = _gradescope_root(tmp_path, monkeypatch, _item(failure))
    assert gradescope.main(["run", "--root", str(root)]) == 1
    assert not (root / "results" / "results.json").exists()


def test_a_notebook_the_student_must_fix_still_gets_results_on_gradescope(tmp_path, monkeypatch):
    """An unreadable notebook is the student's to fix: results.json with the reason, exit 0?"""
    from autograder.course.exports import gradescope

    root = _gradescope_root(tmp_path, monkeypatch, _item("mine.ipynb is not valid JSON"))
    assert gradescope.main(["run", "--root", str(root)]) == 0
    body = json.loads((root / "results" / "results.json").read_text())
    assert body["score"] == 0.0 and "not valid JSON" in body["output"]


def test_a_submitted_link_is_not_followed_on_gradescope(tmp_path, monkeypatch):
    """A submission whose notebook is a link (to the course secret, say): not read, not graded,
    the student told why?"""
    from autograder.course.exports import gradescope

    root = _gradescope_root(tmp_path, monkeypatch, _item(None))
    (root / "submission" / "mine.ipynb").unlink()
    (root / "source" / "course.secret").write_text("s3cret-value")
    (root / "submission" / "mine.ipynb").symlink_to(root / "source" / "course.secret")
    assert gradescope.main(["run", "--root", str(root)]) == 0
    body = json.loads((root / "results" / "results.json").read_text())
    assert "symbolic link" in body["output"] and "s3cret" not in json.dumps(body)


def _result() -> SubmissionResult:
    cases = [
        CaseResult(
            "story", True, 1.0, False, "n", {"value": 1.0}, {"value": 1.0}, 0.1, {"args": [1]}
        ),
        CaseResult(
            "random-2", False, 2.0, True, "", {"value": 2.0}, {"value": 3.0}, 0.2, {"args": [7]}
        ),
    ]
    f = FunctionResult(A, "forward_kl", 3.0, 1.0, 1 / 3, True, cases, "m", "you did m")
    return SubmissionResult("alice", A, "/x.ipynb", 7.0, "2024-01-01", [f], ["w"], None, 1, 0.5)


def test_result_comes_back_the_same_from_its_json():
    """A result stored in the cache and read back: same JSON, same feedback page?"""
    r = _result()
    back = SubmissionResult.from_json(json.loads(json.dumps(r.to_json(show_hidden=True))))
    assert back.to_json(show_hidden=True) == r.to_json(show_hidden=True)
    assert report.feedback_html(back) == report.feedback_html(r)


def test_results_json_is_one_document_with_the_instructors_values():
    """results.json (streamed, one submission per line): one JSON document, generated
    cases' values kept for the instructor, their inputs left out?"""
    text = report.results_json([_result()], {"engine": "drills grade"})
    body = json.loads(text)
    case = body["submissions"][0]["functions"][0]["cases"][1]
    assert (case["expected"], case["got"], case["inputs"]) == ({"value": 2.0}, {"value": 3.0}, None)
    assert [x for x in text.splitlines() if "forward_kl" in x] == [text.splitlines()[3]]


def test_feedback_page_shows_no_value_of_a_generated_case():
    """The page for a failed generated case: its note and verdict, no expected or got value;
    with --show-hidden, both?"""
    page = report.feedback_html(_result())
    row = page.split("random-2")[1].split("</tr>")[0]
    assert "failed" in row and "3.0" not in row and "(hidden)" in row
    shown = report.feedback_html(_result(), show_hidden=True).split("random-2")[1]
    assert ">3<" in shown.split("</tr>")[0]


def test_class_report_counts_each_kind_of_diagnosis():
    """A function carrying several diagnoses of several kinds (a conceptual mistake, missing
    validation, an error shape): each counted under its kind, one count per student?"""
    rep = course_report.ClassReport()
    for i, found in enumerate(
        [
            [
                {"kind": "mistake", "id": "m", "text": "you did m"},
                {"kind": "validation", "id": "v"},
            ],
            [{"kind": "error-shape", "id": "factor", "text": "off by a factor"}],
            [{"kind": "mistake", "id": "m", "text": "you did m"}],
            [],
        ]
    ):
        f = FunctionResult(A, "forward_kl", 3.0, 1.0, 1 / 3, True)
        f.diagnoses = found  # the shape a FunctionResult with a list of diagnoses has
        rep.add(SubmissionResult(f"s{i}", A, "x", 3.0, functions=[f]))
    (fn,) = rep.to_json()["assignments"][A]["functions"]
    got = [(d["kind"], d["id"], d["count"]) for d in fn["diagnoses"]]
    assert got == [("mistake", "m", 2), ("error-shape", "factor", 1), ("validation", "v", 1)]
    assert (fn["failed"], fn["unrecognised"]) == (4, 1)


def test_learner_text_and_json_show_no_value_of_a_generated_case():
    """The text the hidden-test cells and `drills check` print, and `drills check --json`:
    a failed generated case by name and note, without inputs, expected or computed value?"""
    from autograder.scoring.evaluate import feedback_text

    f = _result().functions[0]
    f.cases[1].note = "random distributions"
    text = feedback_text(f)
    assert "random-2: random distributions" in text
    assert "expected" not in text.split("random-2")[1] and "3" not in text.split("random-2")[1]
    assert "got:      3" in feedback_text(f, show_hidden=True)
    learner = f.to_json(for_learner=True)["cases"][1]
    assert (learner["inputs"], learner["expected"], learner["got"]) == (None, None, None)
    assert f.to_json()["cases"][1]["got"] == {"value": 3.0}  # results.json keeps it
