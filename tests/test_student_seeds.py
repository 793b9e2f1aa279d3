"""Per-student hidden inputs: the generated cases' seed takes the student id.

`drills grade` reads the id from the submission's path, the in-kernel engine (nbgrader)
from the autograde folder its kernel runs in, `drills check` uses none unless given one.
Fixed (canonical) cases are the same for everyone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT, available_assignments, run_drills

from autograder import assignments
from autograder.cases import codec, seeds
from autograder.course.grade_cli import check_notebook
from autograder.notebooks import reference
from autograder.scoring import evaluate, kernel, relations
from autograder.scoring.kernel import grade_cell

ASSIGNMENTS = available_assignments()
FUNCTIONS = [(a, f.name) for a in ASSIGNMENTS for f in assignments.get(a).functions]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
A = "01_exact_kl"
STUDENTS = ["alice", "bob", "s-00417"]


def _inputs(a: str, student: str | None) -> dict[str, list[dict]]:
    secret = seeds.course_secret()
    return {
        f.name: evaluate.materialize(a, f, secret, student) for f in assignments.get(a).functions
    }


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_generated_inputs_differ_between_students_and_fixed_ones_do_not(assignment):
    """Does every generated case get other inputs for another student, and every fixed case
    the same (the curriculum's numbers)?"""
    alice, bob = _inputs(assignment, "alice"), _inputs(assignment, "bob")
    anonymous = _inputs(assignment, None)
    for f in assignments.get(assignment).functions:
        for i, case in enumerate(f.cases):
            a, b, n = alice[f.name][i], bob[f.name][i], anonymous[f.name][i]
            if case.hidden:
                assert a["args"] != b["args"] and a["args"] != n["args"], (f.name, case.id)
            else:
                assert a == b == n, (f.name, case.id)


def test_generated_inputs_are_the_same_in_another_process():
    """Is a student's seed stable (not Python's salted hash): the same inputs in a new process?"""
    code = (
        "import json; from autograder import assignments\n"
        "from autograder.cases import seeds\nfrom autograder.scoring import evaluate\n"
        f"a = {A!r}\n"
        "print(json.dumps({f.name: evaluate.materialize(a, f, seeds.course_secret(), 'alice')"
        " for f in assignments.get(a).functions}))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRILLS_SECRET")}
    env["PYTHONHASHSEED"] = "12345"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == json.loads(json.dumps(_inputs(A, "alice")))


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_reference_scores_full_marks_for_every_student(assignment, function):
    """Does the reference pass every case on every student's own generated inputs?"""
    ns = reference.namespace(assignment, ROOT)
    for student in STUDENTS:
        r = kernel.grade_function(
            assignment, function, ns[function], namespace=ns, student=student, root=ROOT
        )
        assert [c.id for c in r.cases if not c.passed] == [], student
        assert r.score == r.points > 0


def test_student_ids_are_normalised_the_same_way_by_both_engines():
    """A folder name with odd characters: do the path reader and the kernel seed with the
    same id (so nbgrader and drills grade still agree)?"""
    raw = "Ada Lovelace (2)"
    from autograder.engine.submission import safe_id

    assert safe_id(raw) == seeds.student_id(raw) == "Ada_Lovelace__2_"
    folder = Path("/course/autograded") / raw / A
    assert seeds.autograde_student(A, folder) == seeds.student_id(raw)


@pytest.mark.parametrize(
    "cwd, student",
    [
        ("/c/autograded/carol/01_exact_kl", "carol"),
        ("/c/autograded/carol/02_clipped_estimators", None),  # another assignment's folder
        ("/c/submitted/carol/01_exact_kl", None),
        ("/c/solutions/01_exact_kl", None),
    ],
)
def test_kernel_takes_the_student_from_the_autograde_folder_only(cwd, student):
    """Is the student read from autograded/<student>/<assignment>/ and nowhere else?"""
    assert seeds.autograde_student(A, cwd) == student


@pytest.mark.parametrize("student", ["carol", None])
def test_grade_cell_seeds_with_the_autograde_folders_student(tmp_path, monkeypatch, student):
    """In nbgrader's autograde folder, does the hidden-test cell call the learner's function
    on that student's generated inputs (and on the anonymous ones elsewhere), and its probes
    on that student's inputs too?"""
    folder = tmp_path / ("autograded/carol/" + A if student else "work")
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    calls: list = []

    def forward_kl(*args, **kwargs):
        calls.append(codec.encode(list(args)))
        return 0.0

    grade_cell(A, "forward_kl", forward_kl)
    fspec = assignments.get(A).function("forward_kl")
    want = evaluate.materialize(A, fspec, seeds.course_secret(), student)
    assert calls[: len(want)] == [inp["args"] for inp in want]
    # after every check, the probes of the same draw (this function fails, so its feedback
    # reads them: scoring.relations): that student's inputs changed, not another's
    probes = relations.probe_inputs(A, fspec, seeds.course_secret(), student, want)
    assert probes and calls[len(want) :] == [p["args"] for p in probes]


def _submit(folder: Path, student: str, nb_path: Path) -> None:
    target = folder / "submitted" / student / A / f"{A}.ipynb"
    target.parent.mkdir(parents=True)
    nbformat.write(nbformat.read(str(nb_path), as_version=4), str(target))


@pytest.mark.slow
def test_correct_submission_scores_the_same_under_two_student_ids(tmp_path):
    """The same correct notebook handed in by two students: the same full score for both,
    although each was graded on their own generated inputs?"""
    for student in ("alice", "bob"):
        _submit(tmp_path, student, CORPUS / "solution.ipynb")
    out = tmp_path / "out"
    p = run_drills("grade", str(tmp_path / "submitted"), "--out", str(out), "--jobs", "2")
    assert p.returncode == 0, p.stderr[-2000:]
    items = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [(i["student"], i["score"], i["max_score"]) for i in items] == [
        ("alice", 7.0, 7.0),
        ("bob", 7.0, 7.0),
    ]
    results = json.loads((out / "results.json").read_text())
    assert [s["score"] for s in results["submissions"]] == [7.0, 7.0]


def test_check_seeds_with_no_student_unless_one_is_given():
    """`drills check` (a learner's own check): anonymous inputs by default, the given
    student's with --student, and full marks either way for a correct notebook?"""
    fspec = assignments.get(A).function("forward_kl")
    for student in (None, "bob"):
        r = check_notebook(CORPUS / "solution.ipynb", A, timeout=10, student=student)
        f = next(f for f in r.functions if f.function == "forward_kl")
        want = evaluate.materialize(A, fspec, seeds.course_secret(), student)
        assert [c.inputs["args"] for c in f.cases] == [i["args"] for i in want]
        assert r.score == r.max_score == 7.0
