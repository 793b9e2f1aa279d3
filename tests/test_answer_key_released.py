"""Do the released notebooks hand out an answer key?

A working graded function in a released notebook, under any name and in any cell, can be
copied into the cell that grades it: 04's setup once carried 03's ``mean_sampled_log_ratio``,
which copied into 03 took full marks. The scan (autograder.course.answer_key) finds such a
function by what it computes, not by its name; these tests show it has the power to find one
(every graded function in the solution notebooks, a renamed copy planted in an exercise) and
that the exercises hold none.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT, run_drills

from autograder import assignments
from autograder.course import answer_key
from autograder.notebooks import notebook

pytestmark = pytest.mark.slow

EXERCISES = sorted((ROOT / "exercises").glob("*/*.ipynb"))


def test_no_released_notebook_computes_a_graded_function_of_the_course():
    """The exercises, as students receive them: no function in any cell reproduces any
    notebook's graded function (the 04 → 03 case included)."""
    assert [str(f) for f in answer_key.scan(EXERCISES)] == []


def test_the_scan_finds_every_graded_function_in_the_solution_notebooks():
    """The scan's power: run on the solution notebooks, does it find each graded function of
    each notebook (so a clean result on the exercises means something)?"""
    found = answer_key.scan(sorted((ROOT / "solutions").glob("*/*.ipynb")))
    own = {(f.assignment, f.graded) for f in found if f.notebook == f.assignment}
    every = {
        (a, f.name) for a in notebook.available_assignments() for f in assignments.get(a).functions
    }
    assert every - own == set()


def test_a_renamed_copy_in_an_exploration_cell_is_found(tmp_path):
    """03's reference `mean_sampled_log_ratio`, renamed `_average_gap`, planted in an
    exploration cell of 01: found by behaviour, named with where it is and what it computes."""
    src = notebook.solution_defs("03_sum_vs_mean")["mean_sampled_log_ratio"]
    import ast

    code = ast.unparse(src).replace("def mean_sampled_log_ratio(", "def _average_gap(", 1)
    nb = json.loads((ROOT / "exercises" / "01_exact_kl" / "01_exact_kl.ipynb").read_text())
    nb["cells"].append(
        {"cell_type": "code", "id": "planted", "metadata": {}, "outputs": [],
         "execution_count": None, "source": "import math\n\n" + code}
    )  # fmt: skip
    planted = tmp_path / "01_exact_kl.ipynb"
    planted.write_text(json.dumps(nb))
    (f,) = answer_key.scan([planted], ["03_sum_vs_mean"])
    assert (f.notebook, f.function, f.assignment, f.graded) == (
        "01_exact_kl", "_average_gap", "03_sum_vs_mean", "mean_sampled_log_ratio",
    )  # fmt: skip
    assert "it is an answer key" in str(f)


def test_a_cells_other_statements_are_not_run(tmp_path):
    """Only imports, definitions and literal constants run: a cell that would train a model or
    write a file does neither under the scan."""
    target = tmp_path / "written.txt"
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source":
        f"LIMIT = 3\nopen({str(target)!r}, 'w').write('ran')\ndef f(x):\n    return x\n"}]}  # fmt: skip
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb))
    functions, ns = answer_key.released_functions(path)
    assert [name for _, name, _ in functions] == ["f"] and ns["LIMIT"] == 3
    assert not target.exists()


def test_drills_release_fails_on_an_answer_key(tmp_path):
    """A course copy whose 04 setup carries 03's function again (a later cell binds the name to
    the learner's stub, which must not hide it): `drills release`, which regenerates the
    exercise, fails, naming the function, its cell and what it computes."""
    course = tmp_path / "course"
    for part in ("solutions", "exercises"):
        shutil.copytree(ROOT / part, course / part)
    a = "04_rlef_turn_rewards"
    path = course / "solutions" / a / f"{a}.ipynb"
    nb = json.loads(path.read_text())
    setup = next(
        c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "setup_types"
    )
    code = ast_source("03_sum_vs_mean", "mean_sampled_log_ratio")
    setup["source"] = "".join(setup["source"]) + "\n\n\n" + code + "\n"
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    said = "answer key: 04_rlef_turn_rewards: `mean_sampled_log_ratio` (cell 6) gives the"
    # one run (nbgrader's generation is most of its time); --check scans with the same code
    # (cli._answer_keys) once the exercises are up to date
    p = run_drills("release", a, cwd=course, DRILLS_COURSE_ROOT=str(course))
    assert p.returncode == 1, p.stdout + p.stderr
    assert said in p.stderr, p.stdout + p.stderr


def ast_source(assignment: str, name: str) -> str:
    import ast

    return ast.unparse(notebook.solution_defs(assignment)[name])


# The graded maths tiny_model holds, found by behaviour: 07's thr_weights, nll_on_correct and
# smaug_floor, all in tiny_model/reference.py, the one module the course form leaves out
# (docs/security.md). The full repository keeps them for the studies.
KNOWN_IN_REFERENCE = {
    ("tiny_model.reference", "thr_weights", "07_beyond_nthr", "thr_weights"),
    ("tiny_model.reference", "nll_on_correct", "07_beyond_nthr", "nll_on_correct"),
    ("tiny_model.reference", "smaug_floor", "07_beyond_nthr", "smaug_floor"),
}


def test_tiny_model_holds_its_answer_keys_in_reference_only():
    """Every function of every tiny_model module, run on the cases of 05-07's graded functions
    (the torch notebooks, whose maths the model's training uses): the known three reproduce
    one, all in reference.py, and no other module's function does (a graded formula added
    elsewhere in tiny_model would ship in the course form's wheel)."""
    import importlib
    import pkgutil

    import tiny_model

    modules = tuple(
        importlib.import_module(f"tiny_model.{m.name}")
        for m in pkgutil.iter_modules(tiny_model.__path__)
        if m.name != "__main__"  # its main() parses arguments and exits
    )
    found = answer_key.scan([], ["05_grpo_lld", "06_nthr", "07_beyond_nthr"], modules)
    got = {(f.notebook, f.function, f.assignment, f.graded) for f in found}
    assert got == KNOWN_IN_REFERENCE, (
        f"new: {got - KNOWN_IN_REFERENCE}, gone: {KNOWN_IN_REFERENCE - got}"
    )
