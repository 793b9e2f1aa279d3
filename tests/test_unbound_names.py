"""Names a graded function uses that the grader's program lacks: found from the text, said
with where each comes from and what to do.

A learner's kernel holds more than the grader runs: an import in an exploration cell, a helper
deleted since it ran, Jupyter's `display`. A function using one passes its self-check and
raised a bare NameError when graded ("find the line that fails"), with no word that the
kernel and the grader's program differ.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
import pytest

from autograder.assignments import MODULES
from autograder.course.grade_cli import Grader, check_notebook
from autograder.engine import submission, unbound

REPO = Path(__file__).resolve().parent.parent
A = "01_exact_kl"
SOLUTION = json.loads((REPO / "solutions" / A / f"{A}.ipynb").read_text())


def _cell(nb: dict, gid: str) -> dict:
    return next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == gid)


def _write(tmp_path: Path, nb: dict) -> Path:
    path = tmp_path / f"{A}.ipynb"
    path.write_text(json.dumps(nb))
    return path


def _forward_kl_using(nb: dict, line: str) -> None:
    cell = _cell(nb, "forward_kl")
    src = "".join(cell["source"])
    head, body = src.split('"""', 2)[0:2], src.split('"""', 2)[2]
    cell["source"] = '"""'.join(head) + '"""' + body.replace("\n", f"\n    {line}\n", 1)


@pytest.mark.parametrize("assignment", sorted(MODULES))
def test_no_solution_uses_a_name_the_graders_program_lacks(assignment):
    """Every notebook's reference, graded as a submission: does any graded function use a
    name that neither the locked setup nor the graded cells define (an exploration cell's
    import, as 07's `np` once was)?"""
    nb = nbformat.read(str(REPO / "solutions" / assignment / f"{assignment}.ipynb"), as_version=4)
    prep = Grader(warm=False).prepare(assignment)
    prog = submission.build_program(assignment, nb, nb, prep.names)
    assert prog.unbound_notes == {}


def test_an_exploration_cells_import_is_named_with_its_cell_and_the_fix(tmp_path):
    """forward_kl uses `statistics`, imported only in an exploration cell: the self-check
    passes in the kernel, the grade gets NameError. Does the feedback name the cell and say to
    import it in the function's cell?"""
    nb = copy.deepcopy(SOLUTION)
    at = nb["cells"].index(_cell(nb, "forward_kl"))
    nb["cells"].insert(at, {"cell_type": "code", "metadata": {}, "source": "import statistics",
                            "outputs": [], "execution_count": None})  # fmt: skip
    _forward_kl_using(nb, "statistics.fmean([1.0])")
    r = check_notebook(_write(tmp_path, nb), A)
    (f,) = [f for f in r.functions if f.function == "forward_kl"]
    assert f.score < f.points
    assert f"`statistics` is imported in cell {at + 1}, which is not graded" in f.note
    assert "import it in your function's cell" in f.note


def test_a_deleted_helper_says_the_kernel_may_still_hold_it(tmp_path):
    """forward_kl calls `_clip`, whose cell the learner deleted: the kernel keeps the old
    definition and the self-check passes. Does the feedback say no saved cell defines it and
    how to see what the grader sees?"""
    nb = copy.deepcopy(SOLUTION)
    _forward_kl_using(nb, "_clip(0.5)")
    r = check_notebook(_write(tmp_path, nb), A)
    (f,) = [f for f in r.functions if f.function == "forward_kl"]
    assert "`_clip` is defined in no cell of the saved notebook" in f.note
    assert "restart the kernel and run all cells" in f.note


def test_what_the_program_binds_is_not_reported():
    """No false cause: a name bound at the top of a graded cell or the setup, a builtin, a
    local, a name of an enclosing function, a served callee; and nothing at all when a cell
    star-imports (its names cannot be known)."""
    setup = ["import math\nimport numpy as np\n"]
    graded = [
        "LIMIT = 3\n"
        "def helper(x):\n    return math.log(x) + LIMIT\n"
        "def f(x, y=2):\n"
        "    z = [helper(v) for v in range(y)]\n"
        "    def inner():\n        return z, x, np.pi, len(z)\n"
        "    return inner(), served_callee(x)\n"
    ]
    assert unbound.missing_names(setup, graded, ["f"], {"f": {"served_callee"}}) == {}
    assert unbound.missing_names(setup, graded, ["f"], {}) == {"f": ["served_callee"]}
    star = ["from math import *\n", "def f(x):\n    return log(x)\n"]
    assert unbound.missing_names([], star, ["f"], {}) == {}


def test_jupyters_own_names_are_said_to_be_jupyters():
    """`display` exists in every kernel and in no grader's program: is it named as Jupyter's
    own, not as a deleted definition (restarting the kernel would not reveal it)?"""
    names = unbound.missing_names([], ["def f(x):\n    display(x)\n    return x\n"], ["f"], {})
    text = unbound.note("f", names["f"], [])
    assert "`display` is Jupyter's own" in text and "restart" not in text
