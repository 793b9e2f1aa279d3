"""drills grade and nbgrader (autograde + export) give the same points on the same submissions.

Submissions per assignment (tests/nbgrader_course.py): the solution, the untouched
stub, and "mistakes-K" notebooks, the K-th carrying the K-th catalogued mistake of
every function that has one. drills grade runs once over all of them.

nbgrader runs in two courses (half of the assignments each, side by side), each in two
nbgrader processes: generate_assignment for all its assignments, then autograde of every
submission and export. Starting ``python -m nbgrader`` costs about 5 s of CPU, and one call
per step and assignment (21 calls) was most of this module's time.

What nbgrader executes: the solution is the whole released notebook (story, self-checks,
the exploration, which skips itself under nbgrader's NBGRADER_EXECUTION), so a learner who
keeps every cell gets full marks from both engines. The stub and the mistakes-K notebooks
are slim (learner_notebook(slim=True)): only the cells with nbgrader metadata (setup,
solution and hidden-test cells), as from a learner who deleted the rest; nbgrader autograde
grades them without error, and both engines must still agree on them. Their points come
from the hidden-test cells alone, so slimming changes what is executed, not what is scored
(a full mistakes-1 notebook of every assignment gave nbgrader the same scores as the slim
one when this was changed). The notebooks' own top-to-bottom runs are tests/test_notebooks.py
and tests/test_browser.py.

nbgrader needs a few seconds per notebook (about 8 s of CPU on 2 cores), so `make test`
runs a slice (conftest.SLICE):

- the nbgrader round trip of the first notebook and the first tiny-model notebook, each with
  the solution, the stub and mistakes-1 (the first mistake of every function);
- the sandbox against the in-kernel engine (the code nbgrader's hidden-test cells run),
  function by function, on the solution, the stub and mistakes-1 of every notebook.

DRILLS_ONLY=ID (what `drills author-check ID` sets) makes the slice that one notebook: its
round trip through nbgrader, and the sandbox against the in-kernel engine, for it alone; with
DRILLS_AGREEMENT_ALL=1 as well, with every catalogued mistake of that notebook.

DRILLS_AGREEMENT_ALL=1 (or DRILLS_SWEEP=1, `make sweep`) runs the sweep: every notebook
through nbgrader with every catalogued mistake (about 90 notebooks), and every mistake
through the sandbox and the in-kernel engine. What the slice leaves to the sweep is
nbgrader's own run of the other five notebooks' hidden-test cells: tests/test_notebooks.py
and tests/test_browser.py execute those cells in every solution at full points, and
tests/test_release.py runs generate_assignment on every notebook.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import nbgrader_course
import pytest
from conftest import ONLY, SLICE, sweep

from autograder import assignments
from autograder.notebooks import notebook
from autograder.scoring import kernel

pytestmark = pytest.mark.slow

# Assignments with a source notebook, a case module and a released exercise (exercises/).
ASSIGNMENTS = [
    a
    for a in notebook.available_assignments()
    if a in assignments.MODULES
    and notebook.release_path(a).is_file()
    and (not ONLY or a in ONLY)  # DRILLS_ONLY (drills author-check): those notebooks only
]
ALL = sweep("DRILLS_AGREEMENT_ALL")
# The assignments nbgrader grades in this session (all of them in the sweep).
ROUND_TRIP = ASSIGNMENTS if ALL else [a for a in ASSIGNMENTS if a in SLICE]
# The learner notebooks of each assignment in the sweep-less run: one mistake per function.
SLICE_KINDS = ("stub", "mistakes-1")


def _skip_unless_round_tripped(assignment: str) -> None:
    if assignment not in ROUND_TRIP:
        pytest.skip(
            f"nbgrader's round trip of {assignment} runs in the sweep (DRILLS_AGREEMENT_ALL=1 or "
            "make sweep); make test round-trips " + " and ".join(ROUND_TRIP)
        )


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("DRILLS_SECRET", None)
    return env


def _drills(subs: list[str], out: Path) -> dict[tuple[str, str], dict]:
    p = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "grade", *subs, "--out", str(out), "--jobs", "2"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=1200,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    with (out / "grades.csv").open(newline="") as f:
        return {(r["student_id"], r["assignment"]): r for r in csv.DictReader(f)}


def _course_for(tmp: Path, names: list[str]) -> tuple[list[dict], dict[str, dict]]:
    """One nbgrader course for ``names``: (nbgrader export's rows, the submitted notebooks
    by assignment and student)."""
    course = nbgrader_course.make_course(tmp, names)
    submitted: dict[str, dict] = {}
    for a in names:
        exercise = course / "exercises" / a / f"{a}.ipynb"
        chosen = nbgrader_course.learner_notebooks(
            a, exercise=exercise, slim=True, kinds=None if ALL else SLICE_KINDS
        )
        chosen["solution"] = nbgrader_course.learner_notebook(a, "solution", None, exercise)
        for student, nb in chosen.items():
            nbgrader_course.submit(course, student, a, nb)
        submitted[a] = chosen
    return nbgrader_course.round_trip(course, names), submitted


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("agreement")
    halves = [h for h in (ROUND_TRIP[0::2], ROUND_TRIP[1::2]) if h]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(
            pool.map(lambda i: _course_for(tmp / f"half{i}", halves[i]), range(len(halves)))
        )
    nbgrader = {
        (r["student_id"], r["assignment"]): float(r["score"]) for rows, _ in done for r in rows
    }
    submitted = {a: nbs for _, subs in done for a, nbs in subs.items()}
    ours = _drills(
        [str(tmp / f"half{i}" / "course" / "submitted") for i in range(len(halves))], tmp / "drills"
    )
    return nbgrader, ours, submitted


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_drills_grade_and_nbgrader_give_the_same_scores(both, assignment):
    """Solution, stub and catalogued mistakes: the same score per student from both engines?"""
    _skip_unless_round_tripped(assignment)
    nbgrader, ours, submitted = both
    keys = {(s, assignment) for s in submitted[assignment]}
    theirs = {k: v for k, v in nbgrader.items() if k in keys}
    assert set(theirs) == keys and keys <= set(ours)
    # a course's students who did not submit this assignment: export's "no submission" row, 0
    assert all(v == 0.0 for k, v in nbgrader.items() if k[1] == assignment and k not in keys)
    mine = {k: float(ours[k]["score"]) for k in keys}
    diff = {k: (theirs[k], mine[k]) for k in keys if abs(theirs[k] - mine[k]) > 1e-6}
    assert diff == {}
    top = float(ours[("solution", assignment)]["max_score"])
    assert mine[("solution", assignment)] == top > 0
    assert mine[("stub", assignment)] == 0.0
    assert all(v < top for k, v in mine.items() if k[0].startswith("mistakes-"))
    # students of other assignments get a "no submission" row as nbgrader export does, but
    # with an empty score (no grade) where nbgrader's export writes 0
    assert all(
        r["score"] == "" and r["timestamp"] == ""
        for k, r in ours.items()
        if k[1] == assignment and k not in keys
    )


def _in_kernel(assignment: str, nb, student: str) -> dict[str, tuple[float, str | None]]:
    """Points and recognised mistake per function, from the in-kernel engine on the same cells,
    with the generated inputs of ``student`` (as nbgrader's kernel reads it from its folder)."""
    ns = nbgrader_course.kernel_namespace(assignment, nb, f"agreement_{assignment}")
    out = {}
    for f in assignments.get(assignment).functions:
        r = kernel.grade_function(assignment, f.name, ns[f.name], namespace=ns, student=student)
        out[f.name] = (r.score, r.mistake)
    return out


def test_sandbox_matches_in_kernel_engine_on_every_mistake(tmp_path):
    """The first catalogued mistake of every function of every notebook (every mistake in the
    sweep): does the sandbox give the in-kernel engine's points and recognise the same mistake,
    function by function?"""
    import json

    expected = {}
    kinds = None if ALL else ("solution", *SLICE_KINDS)
    for a in ASSIGNMENTS:
        for student, nb in nbgrader_course.learner_notebooks(a, kinds=kinds).items():
            folder = tmp_path / "submitted" / student / a
            folder.mkdir(parents=True)
            nbformat.write(nb, str(folder / f"{a}.ipynb"))
            expected[(student, a)] = _in_kernel(a, nb, student)
    out = tmp_path / "out"
    _drills([str(tmp_path / "submitted")], out)
    res = json.loads((out / "results.json").read_text())
    got = {
        (s["student"], s["assignment"]): {
            f["function"]: (f["score"], f["mistake"]) for f in s["functions"]
        }
        for s in res["submissions"]
        if s["feedback"]
    }
    assert got == expected
    for (student, a), fns in got.items():
        if student.startswith("mistakes-"):
            k = int(student.split("-")[1]) - 1
            for f in assignments.get(a).functions:
                if k < len(f.mistakes):
                    assert fns[f.name][1] == f.mistakes[k].id, (a, f.name, fns[f.name])


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_nbgrader_round_trip_exports_the_scores_the_cases_predict(both, assignment):
    """generate_assignment, autograde, export: full marks for the solution, 0 for the stub,
    and for a catalogued mistake exactly the partial score the in-kernel cases predict?"""
    _skip_unless_round_tripped(assignment)
    nbgrader, _, submitted = both
    total = sum(notebook.points(assignment, f.name) for f in assignments.get(assignment).functions)
    assert nbgrader[("solution", assignment)] == pytest.approx(total)
    assert nbgrader[("stub", assignment)] == 0.0
    nb = submitted[assignment]["mistakes-1"]  # the notebook nbgrader graded
    predicted = sum(score for score, _ in _in_kernel(assignment, nb, "mistakes-1").values())
    assert 0 < nbgrader[("mistakes-1", assignment)] < total
    assert nbgrader[("mistakes-1", assignment)] == pytest.approx(predicted, abs=1e-9)
