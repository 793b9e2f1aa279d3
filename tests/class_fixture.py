"""A generated class: learner notebooks laid out as nbgrader's submitted/<student>/<assignment>/.

    plan = fixture_plan()                 # 40 (student, assignment, kind) of 01-04
    plan = mixed_plan(1000, seed=0)       # a random mixture over every assignment (benchmarks)
    write_class(folder, plan)             # folder/submitted/<student>/<assignment>/<assignment>.ipynb
    expected_counts(plan)                 # what the class report must count for that plan

Kinds: "solution", "stub" and "mistakes-K" as in tests/nbgrader_course.py (a mistakes-K
notebook replays the K-th catalogued mistake of every function on the generated inputs of
the student it is written for), and "unrecognised": every graded function checks its
inputs right but returns its result moved by 0.123 (text: a suffix; a record: each of its
fields), which no catalogued mistake explains (once error shapes are diagnosed, an
"offset"). The move is in each function's own result: its graded callees are the reference's
while it is graded (one slip, one charge), so a result the move left alone would score full.
"broken": the solution with a syntax error in its first cell that defines a graded function.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import nbformat
import nbgrader_course

from autograder import assignments
from autograder.notebooks import notebook

Plan = list[tuple[str, str, str]]  # (student, assignment, kind)


def cells_of(assignment: str) -> dict[str, list[str]]:
    """Solution cell grade_id -> the graded functions it defines (from the source notebook)."""
    src = notebook.read(notebook.source_path(assignment))
    return {
        gid: [
            f.name
            for f in assignments.get(assignment).functions
            if re.search(rf"^def {re.escape(f.name)}\(", source, re.M)
        ]
        for _, gid, source in notebook.code_cells(src, {"solution"})
    }


def exercise_with(assignment: str, cell_source: Callable[[list[str]], str]):
    """The exercise with each solution cell replaced by ``cell_source(functions it defines)``."""
    nb = nbformat.read(str(notebook.release_path(assignment)), as_version=4)
    cells = cells_of(assignment)
    for c in nb.cells:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if c.get("cell_type") == "code" and gid in cells:
            c.source = cell_source(cells[gid])
    return nb


SHIFT_SRC = """

def _drills_shift(x):
    import dataclasses as _dc
    if _dc.is_dataclass(x) and not isinstance(x, type):  # a record (04's TurnReward): each field
        return _dc.replace(x, **{f.name: _drills_shift(getattr(x, f.name)) for f in _dc.fields(x)})
    if isinstance(x, (list, tuple)):
        return type(x)(_drills_shift(v) for v in x)
    if isinstance(x, str):
        return x + "  # shifted"
    try:
        return x + 0.123
    except TypeError:
        return x
"""


def _shifted(assignment: str):
    """The solution with every graded function's result moved by 0.123: its input checks
    are right and its values wrong in a way no catalogued mistake describes."""
    nb = nbgrader_course.learner_notebook(assignment, "solution", None)
    cells = cells_of(assignment)
    for c in nb.cells:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if c.get("cell_type") == "code" and cells.get(gid):
            c.source += SHIFT_SRC + "".join(
                f"\n_drills_right_{n} = {n}\n\n\n"
                f"def {n}(*args, **kwargs):\n"
                f"    return _drills_shift(_drills_right_{n}(*args, **kwargs))\n"
                for n in cells[gid]
            )
    return nb


def learner(assignment: str, kind: str, student: str):
    if kind == "unrecognised":
        return _shifted(assignment)
    if kind == "broken":
        return _broken(assignment, student)
    return nbgrader_course.learner_notebook(assignment, kind, student)


def _broken(assignment: str, student: str):
    """The solution with a syntax error at the end of the first cell that defines a graded
    function (a half-typed line): that cell does not load, its functions are missing, the
    notebook's other cells still run."""
    nb = nbgrader_course.learner_notebook(assignment, "solution", student)
    names = [f.name for f in assignments.get(assignment).functions]
    for cell in nb.cells:
        if cell.cell_type == "code" and any(f"def {n}(" in cell.source for n in names):
            cell.source += "\n\nresult = (  # unfinished\n"
            break
    return nb


def write_class(folder: Path, plan: Plan) -> Path:
    """Write every notebook of ``plan``; return ``folder/submitted``."""
    shared: dict[tuple[str, str], nbformat.NotebookNode] = {}
    for student, a, kind in plan:
        if kind.startswith("mistakes-"):
            nb = learner(a, kind, student)  # the replay is the student's own
        else:
            nb = shared.setdefault((a, kind), learner(a, kind, student))
        path = folder / "submitted" / student / a / f"{a}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(path))
    return folder / "submitted"


def _most(a: str) -> int:
    return max(len(f.mistakes) for f in assignments.get(a).functions)


def fixture_plan() -> Plan:
    """40 submissions: every catalogued mistake of 01 and 04 (the first one made by three
    students, the second by two), two correct, two blank and one unrecognised notebook each;
    a solution, a stub and one or two mistakes of 02 and 03."""
    kinds = {
        a: ["mistakes-1"] * 3
        + ["mistakes-2"] * 2
        + [f"mistakes-{k}" for k in range(3, _most(a) + 1)]
        + ["solution", "solution", "stub", "stub", "unrecognised"]
        for a in ("01_exact_kl", "04_rlef_turn_rewards")
    }
    kinds["02_clipped_estimators"] = ["solution", "stub", "mistakes-1"]
    kinds["03_sum_vs_mean"] = ["solution", "stub", "mistakes-1", "mistakes-2"]
    return [(f"st{i:02d}", a, kind) for a in sorted(kinds) for i, kind in enumerate(kinds[a])]


def mixed_plan(n: int, seed: int = 0, broken: float = 0.0) -> Plan:
    """``n`` submissions over every assignment (students in turn hand in each of them):
    40 % correct, 20 % blank, 40 % one catalogued mistake index at random; with ``broken``,
    that fraction of the mistakes' share is a notebook that does not load whole (a syntax
    error in a graded cell) instead."""
    rng = random.Random(seed)
    names = list(notebook.ASSIGNMENTS)
    plan = []
    for j in range(n):
        a = names[j % len(names)]
        x = rng.random()
        kind = (
            "solution"
            if x < 0.4
            else "stub"
            if x < 0.6
            else "broken"
            if x >= 1.0 - broken
            else f"mistakes-{rng.randint(1, _most(a))}"
        )
        plan.append((f"s{j // len(names):04d}", a, kind))
    return plan


def expected_counts(plan: Plan) -> dict[tuple[str, str], dict]:
    """Per (assignment, function): full marks, not attempted, unrecognised, and how many
    students each catalogued mistake names, as the plan implies."""
    out: dict[tuple[str, str], dict] = {}
    for _, a, kind in plan:
        for f in assignments.get(a).functions:
            c = out.setdefault(
                (a, f.name),
                {"full_marks": 0, "not_attempted": 0, "unrecognised": 0, "mistakes": Counter()},
            )
            if kind == "stub":
                c["not_attempted"] += 1
            elif kind == "unrecognised":
                c["unrecognised"] += 1
            elif kind.startswith("mistakes-") and int(kind.split("-")[1]) <= len(f.mistakes):
                c["mistakes"][f.mistakes[int(kind.split("-")[1]) - 1].id] += 1
            else:
                c["full_marks"] += 1  # the solution, or a mistakes-K past this function's list
    return out
