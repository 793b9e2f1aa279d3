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
    (line,) = [d.text for d in f.diagnoses if d.kind == "name"]  # one cost line, its cause
    assert f"`statistics` is imported in cell {at + 1}, which is not graded" in line
    assert "import it in your function's cell" in line
    assert "statistics" not in f.note  # said once


def test_a_deleted_helper_says_the_kernel_may_still_hold_it(tmp_path):
    """forward_kl calls `_clip`, whose cell the learner deleted: the kernel keeps the old
    definition and the self-check passes. Does the feedback say no saved cell defines it and
    how to see what the grader sees?"""
    nb = copy.deepcopy(SOLUTION)
    _forward_kl_using(nb, "_clip(0.5)")
    r = check_notebook(_write(tmp_path, nb), A)
    (f,) = [f for f in r.functions if f.function == "forward_kl"]
    (line,) = [d.text for d in f.diagnoses if d.kind == "name"]
    assert "`_clip` is defined in no cell of the saved notebook" in line
    assert "restart the kernel and run all cells" in line
    assert "checks raise NameError: \"name '_clip' is not defined\")" in line, line  # counted


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


# -- the self-check in the kernel says what `drills check` says ------------------------------


def _kernel_module(tmp_path: Path, nb: dict, name: str = "kernel_cells"):
    """The setup and solution cells of ``nb`` as a module with source (as IPython's cells have:
    inspect.getsource works on its functions), standing in for a learner's kernel."""
    import importlib.util

    roles = ("setup", "solution")
    src = "\n\n".join(
        "".join(c["source"])
        for c in nb["cells"]
        if c["cell_type"] == "code"
        and (
            c["metadata"].get("nbgrader", {}).get("solution")
            or str(c["metadata"].get("nbgrader", {}).get("grade_id", "")).startswith(roles[0])
        )
    )
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _self_check(mod, saved: Path, capsys) -> str:
    from autograder.selfcheck import SelfCheck

    check = SelfCheck(A, path=saved)
    p, q = [0.25, 0.75], [0.5, 0.5]
    for _ in range(2):  # a second call with nothing changed says nothing again
        check.value(mod.forward_kl, p, q, expected=mod.forward_kl(p, q))
    return capsys.readouterr().out


def test_the_self_check_names_a_helper_the_saved_notebook_lost(tmp_path, capsys):
    """The kernel still holds `_clip`, the saved file no longer defines it: the self-check
    passes there. Does it say, once and above its result, the sentence `drills check` gives?"""
    kernel = copy.deepcopy(SOLUTION)
    _forward_kl_using(kernel, "_clip(0.5)")
    mod = _kernel_module(tmp_path, kernel)
    mod._clip = lambda x: x  # defined by a cell since deleted
    out = _self_check(mod, _write(tmp_path, kernel), capsys)
    assert out.count("⚠ ") == 1, out
    assert "`_clip` is defined in no cell of the saved notebook" in out, out
    r = check_notebook(tmp_path / f"{A}.ipynb", A)
    (f,) = [f for f in r.functions if f.function == "forward_kl"]
    (line,) = [d.text for d in f.diagnoses if d.kind == "name"]
    assert out.strip().removeprefix("⚠ ") in line  # the same words as the grade's feedback


def test_the_self_check_says_when_the_kernels_function_is_not_the_saved_one(tmp_path, capsys):
    """A learner edits forward_kl, runs its cell and checks without saving: the check ran code
    the grade will not read. Does it say so and say to save?"""
    edited = copy.deepcopy(SOLUTION)
    _forward_kl_using(edited, "unused = 1")
    mod = _kernel_module(tmp_path, edited)
    out = _self_check(mod, _write(tmp_path, SOLUTION), capsys)
    assert out.count("⚠ ") == 1, out
    assert "this check ran the kernel's `forward_kl`, which differs from the saved" in out, out
    assert "save it" in out


def test_the_self_check_says_nothing_when_kernel_and_saved_file_agree(tmp_path, capsys):
    """No false cause: the saved solution and a kernel that ran it (comments aside)."""
    mod = _kernel_module(tmp_path, SOLUTION)
    assert _self_check(mod, _write(tmp_path, SOLUTION), capsys) == ""


def test_the_self_check_compares_nothing_outside_jupyterlab(tmp_path, capsys, monkeypatch):
    """Under nbgrader or nbclient (no JPY_SESSION_NAME) there is no saved file to differ from,
    even when a file of the notebook's name lies in the folder."""
    from autograder.selfcheck import SelfCheck

    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    kernel = copy.deepcopy(SOLUTION)
    _forward_kl_using(kernel, "_clip(0.5)")
    _write(tmp_path, kernel)
    mod = _kernel_module(tmp_path, kernel)
    mod._clip = lambda x: x
    SelfCheck(A).value(mod.forward_kl, [0.5, 0.5], [0.5, 0.5], expected=0.0)
    assert capsys.readouterr().out == ""
