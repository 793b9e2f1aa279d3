"""`drills grade` pieces: reading submissions, building programs, the child channel, the reports."""

from __future__ import annotations

import copy
import csv
import html
import io
import json
from pathlib import Path

import nbformat
import pytest

from autograder.cases.compare import render
from autograder.course import report
from autograder.course.grade_cli import Grader
from autograder.engine import layout, sandbox, submission
from autograder.notebooks import notebook
from autograder.scoring import evaluate, kernel

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"
A = "01_exact_kl"


def _nb(name: str):
    return nbformat.read(str(CORPUS / f"{name}.ipynb"), as_version=4)


# -- finding and reading submissions -----------------------------------------------------------


def test_discover_takes_student_and_assignment_from_nbgrader_layout(tmp_path):
    """Does submitted/<student>/<assignment>/ name the student and the assignment?"""
    for student in ("alice", "bob"):
        folder = tmp_path / "submitted" / student / A
        folder.mkdir(parents=True)
        nbformat.write(_nb("solution"), str(folder / f"{A}.ipynb"))
    (tmp_path / "submitted" / "bob" / A / "timestamp.txt").write_text("2024-05-01 10:00:00\n")
    subs = layout.discover([tmp_path])
    assert [(s.student, s.assignment) for s in subs] == [("alice", A), ("bob", A)]
    assert subs[1].timestamp == "2024-05-01 10:00:00"


def test_discover_names_a_lone_notebook_after_its_file(tmp_path):
    """Is a bare notebook graded as student <file stem>, its assignment still unknown?"""
    p = tmp_path / "carol.ipynb"
    nbformat.write(_nb("solution"), str(p))
    (sub,) = layout.discover([p])
    assert (sub.student, sub.assignment) == ("carol", None)


def test_discover_keeps_one_submission_per_student_and_assignment(tmp_path):
    """One folder given twice (the course folder and the student's own): is the second a
    warning on the one row, not a second row for the same work?"""
    folder = tmp_path / "submitted" / "dan" / A
    folder.mkdir(parents=True)
    nbformat.write(_nb("solution"), str(folder / f"{A}.ipynb"))
    subs = layout.discover([tmp_path, tmp_path / "submitted" / "dan"])
    assert len(subs) == 1 and subs[0].error is None and "ignored" in subs[0].warnings[0]


def test_two_course_folders_that_each_hold_a_dan_are_two_error_rows(tmp_path):
    """Two course folders, each with a `dan`: grading the first and calling the second
    "ignored" (as this grader once did) gives one dan's grade for the other's work, or loses a
    student. Is each an error row of its own, naming the other folder?"""
    for d in ("x", "y"):
        folder = tmp_path / d / "submitted" / "dan" / A
        folder.mkdir(parents=True)
        nbformat.write(_nb("solution"), str(folder / f"{A}.ipynb"))
    subs = layout.discover([tmp_path / "x", tmp_path / "y"])
    assert len(subs) == 2 and all(s.error for s in subs)
    assert len({s.student for s in subs}) == 2
    assert all(s.student.startswith("dan" + layout.COLLISION_MARK) for s in subs)
    assert str(tmp_path / "y" / "submitted" / "dan") in subs[0].error


def test_identify_reads_the_assignment_from_grade_ids():
    """Without a name or a folder to go by, do the notebook's grade_ids tell the assignment?"""
    sub = submission.Submission(path=Path("whatever.ipynb"), student="s", assignment=None)
    sources = {A: {"log_ratios", "forward_kl", "reverse_kl"}, "other": {"k1"}}
    assert submission.identify(sub, _nb("solution"), sources) == A


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "text, reason",
    [
        ('{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {}', "not valid JSON"),
        (
            '{"cells": [], "cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}',
            "duplicated key",
        ),
        ('{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {"x": NaN}}', "NaN"),
        ('{"cells": [], "nbformat": 3, "nbformat_minor": 0, "metadata": {}}', "nbformat 3"),
        ("[1, 2, 3]", "not a notebook"),
        (
            '{"cells": [{"cell_type": "code"}], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}',
            "not a valid notebook",
        ),
    ],
)
def test_load_notebook_rejects_malformed_files(tmp_path, text, reason):
    """Is a malformed notebook refused with a reason instead of being half-read?"""
    p = tmp_path / "bad.ipynb"
    p.write_text(text)
    with pytest.raises(submission.SubmissionError, match=reason):
        submission.load_notebook(p)


@pytest.mark.parametrize("depth", [600, 900, 5000])
def test_load_notebook_refuses_deeply_nested_json_without_crashing(tmp_path, depth):
    """Metadata nested hundreds of levels deep (the schema leaves metadata open): is it one
    submission's "nested too deeply" error, not a RecursionError that stops the whole batch?
    600 passed json.loads and the schema and then crashed when the notebook was built."""
    nb = json.loads((CORPUS / "solution.ipynb").read_text())
    nb["metadata"]["x"] = "NESTED"
    p = tmp_path / f"{A}.ipynb"
    p.write_text(json.dumps(nb).replace('"NESTED"', '{"a": ' * depth + "{}" + "}" * depth))
    with pytest.raises(submission.SubmissionError, match="nested too deeply"):
        submission.load_notebook(p)


def test_load_notebook_rejects_oversized_files(tmp_path):
    """Does the size limit stop a huge file before it is parsed?"""
    p = tmp_path / "big.ipynb"
    p.write_text(" " * 2000)
    with pytest.raises(submission.SubmissionError, match="limit"):
        submission.load_notebook(p, max_bytes=1000)


# -- building the program ----------------------------------------------------------------------


def test_program_uses_source_setup_and_never_the_learners_other_cells():
    """Are the setup cells the source's (even if the learner edited theirs) and are the
    learner's ungraded cells left out of the program?"""
    src = notebook.read(notebook.source_path(A))
    learner = copy.deepcopy(_nb("solution"))
    for c in learner.cells:
        m = c.metadata.get("nbgrader", {})
        if m.get("grade_id", "").startswith("setup"):
            c.source = "import math\nmath.log = lambda x: 0.0  # tampered setup"
    learner.cells.append(nbformat.v4.new_code_cell("raise SystemExit('an ungraded cell ran')"))
    prog = submission.build_program(A, src, learner, ["log_ratios", "forward_kl", "reverse_kl"])
    assert all("tampered" not in s for _, s in prog.setup)
    assert [g for g, _ in prog.cells] == ["log_ratios", "forward_kl", "reverse_kl"]
    assert all("ungraded cell ran" not in s for _, s in prog.cells)


def test_program_marks_functions_of_a_missing_cell():
    """A deleted solution cell: do the functions it defined score 0 as "missing cell"?"""
    src = notebook.read(notebook.source_path(A))
    prog = submission.build_program(
        A, src, _nb("missing_cell"), ["log_ratios", "forward_kl", "reverse_kl"]
    )
    assert list(prog.missing) == ["forward_kl"] and "missing cell" in prog.missing["forward_kl"]


def test_program_runs_every_copy_of_a_duplicated_cell_in_order():
    """A copied solution cell: are both copies run in notebook order, with a warning?"""
    src = notebook.read(notebook.source_path(A))
    prog = submission.build_program(
        A, src, _nb("duplicated_cell"), ["log_ratios", "forward_kl", "reverse_kl"]
    )
    assert [g for g, _ in prog.cells] == ["log_ratios", "forward_kl", "forward_kl", "reverse_kl"]
    assert any("appears 2 times" in w for w in prog.warnings)


# -- the child channel -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "outcome",
    [
        {"value": {"$array": [1.0, 2.0], "shape": [3], "dtype": "float64"}},
        {"value": {"$array": [1.0], "shape": [1], "dtype": "object"}},
        {"value": {"$array": ["a"], "shape": [1], "dtype": "float64"}},
        {"value": {"$float": "nan", "extra": 1}},
        {"value": {"$float": "1e400"}},
        {"value": {"__class__": "Liar"}},
        {"value": 1.0, "raised": "ValueError"},
        {"raised": "Crash", "message": "forged by the child"},
        {"raised": "", "message": ""},
        {"value": "x" * 200_001},
        [1, 2],
    ],
)
def test_channel_rejects_values_that_are_not_codec_forms(outcome):
    """Is anything but an exact codec outcome (bad shapes, dtypes, keys, reserved names) refused?"""
    with pytest.raises(sandbox.ProtocolError):
        sandbox.validate_outcome(outcome)


def test_channel_accepts_every_codec_form():
    """Do the outcomes the real codec writes all pass validation?"""
    import numpy as np
    import torch

    from autograder.cases.codec import encode

    for v in (
        1.5,
        float("nan"),
        -float("inf"),
        [1, (2.0, None)],
        np.arange(6.0).reshape(2, 3),
        torch.ones(2, dtype=torch.float32),
        {"a": True},
        "text",
        np.float32(0.5),
    ):
        sandbox.validate_outcome({"value": encode(v)})


@pytest.mark.parametrize(
    "line", [b'{"t": "done", "t": "done"}', b'{"t": NaN}', b"\xff\xfe", b"[]", b"{"]
)
def test_channel_rejects_malformed_lines(line):
    """Duplicate keys, NaN literals, bad UTF-8, non-objects: are they protocol errors?"""
    with pytest.raises(sandbox.ProtocolError):
        sandbox.parse_line(line)


def test_channel_rejects_records_out_of_order():
    """Can a child skip ahead (a case before its function started, or 'done' too early)?"""
    ex = sandbox.Execution({"f": sandbox.FunctionRun("f", [None, None], [0.0, 0.0])})
    plan = [{"name": "f", "start": 0, "cases": [{}, {}]}]
    st = sandbox.execution._Interpreter(ex, plan, [], [], set())
    st.feed({"t": "setup", "status": "ok"})
    with pytest.raises(sandbox.ProtocolError):
        st.feed({"t": "case", "name": "f", "i": 0, "outcome": {"value": 1}, "seconds": 0})
    st = sandbox.execution._Interpreter(ex, plan, [], [], set())
    st.feed({"t": "setup", "status": "ok"})
    with pytest.raises(sandbox.ProtocolError):
        st.feed({"t": "done"})


def test_child_codec_is_the_trusted_codec_text():
    """Does the child get codec.py's own encode (not a second copy that could drift)?"""
    text = sandbox.codec_source()
    assert "from autograder" not in text
    ns: dict = {}
    exec(text, ns)  # noqa: S102
    assert ns["encode"]([1.0, float("inf")]) == [1.0, {"$float": "inf"}]


# -- engines agree -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def grader():
    return Grader(limits=sandbox.Limits(timeout=10))


@pytest.mark.parametrize(
    "name",
    ["numpy_torch_scalars", "nan_and_inf", "wrong_shapes", "lying_objects", "solution", "stub"],
)
def test_sandboxed_scores_equal_in_kernel_scores(grader, name):
    """On the same learner code, does the sandbox give the in-kernel engine's points per function?"""
    res = grader.grade([submission.Submission(CORPUS / f"{name}.ipynb", name, A)])[0]
    nb = _nb(name)
    src = notebook.read(notebook.source_path(A))
    ns: dict = {}
    import types

    mod = types.ModuleType("corpus_in_kernel")
    ns = mod.__dict__
    for _, _, s in notebook.code_cells(src, {"setup"}):
        exec(s, ns)  # noqa: S102 (our own fixtures)
    for c in nb.cells:
        if c.get("metadata", {}).get("nbgrader", {}).get("solution"):
            exec(c.source, ns)  # noqa: S102
    for f in res.functions:
        k = kernel.grade_function(A, f.function, ns[f.function], namespace=ns, student=name)
        assert (f.function, f.score, f.mistake) == (f.function, k.score, k.mistake)


# -- reports -----------------------------------------------------------------------------------


def test_grades_csv_has_nbgrader_export_columns_and_format(tmp_path):
    """Is grades.csv byte-for-byte what nbgrader's CsvExportPlugin writes for the same grades,
    but for a missing submission's score cells, left empty (no grade) where nbgrader writes 0?"""
    from nbgrader.api import MissingEntry
    from nbgrader.plugins.export import CsvExportPlugin

    class _A:
        name, duedate, max_score = A, None, 7.0

    class _S:
        def __init__(self, i):
            self.id, self.last_name, self.first_name, self.email = i, None, None, None

    class _Sub:
        timestamp, score, late_submission_penalty = None, 4.06, 0.0

    class _GB:
        assignments = [_A()]
        students = [_S("alice"), _S("bob")]

        def find_submission(self, a, s):
            if s == "bob":
                raise MissingEntry()
            return _Sub()

    dest = tmp_path / "nbgrader.csv"
    plugin = CsvExportPlugin()
    plugin.to = str(dest)
    plugin.export(_GB())
    ours = report.grades_csv(
        [
            report.SubmissionResult(
                "alice",
                A,
                "x",
                7.0,
                functions=[evaluate.FunctionResult(A, "f", 7.0, 4.06, 0.58, True)],
            ),
            report.SubmissionResult("bob", A, "", 7.0, submitted=False),
        ]
    )
    theirs = dest.read_text()
    assert ",bob,,,,0.0,0.0,0.0,7.0\n" in theirs
    assert ours == theirs.replace(",bob,,,,0.0,0.0,0.0,7.0\n", ",bob,,,,,,,7.0\n")
    assert list(csv.DictReader(io.StringIO(ours)))[0]["score"] == "4.06"


def test_feedback_hides_generated_inputs_unless_asked(grader):
    """Are the inputs of hidden cases left out of the feedback page, and shown with --show-hidden?"""
    res = grader.grade([submission.Submission(CORPUS / "nan_and_inf.ipynb", "n", A)])[0]
    hidden = [c for f in res.functions for c in f.cases if c.hidden and not c.passed]
    assert hidden
    probe = render(hidden[0].inputs["args"][0], 60)  # as the page would show the first argument
    assert probe not in report.feedback_html(res, show_hidden=False)
    assert "(hidden: generated for grading)" in report.feedback_html(res, show_hidden=False)
    assert html.escape(probe) in report.feedback_html(res, show_hidden=True)
    assert all(
        c["inputs"] is None for f in res.to_json()["functions"] for c in f["cases"] if c["hidden"]
    )


def test_feedback_escapes_learner_text(grader):
    """Can a learner's return value or error message inject HTML into the feedback page?"""
    r = report.SubmissionResult("s<script>", A, "x", 7.0, error="<img src=x onerror=alert(1)>")
    page = report.feedback_html(r)
    assert "<script>" not in page and "<img" not in page


def test_write_atomic_keeps_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    """A crash while writing: is the previous grades.csv intact and no temp file left?"""
    import os

    target = tmp_path / "grades.csv"
    target.write_text("old\n")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        report.write_atomic(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["grades.csv"]
