"""Do the notebooks run? Solutions top to bottom without error, every hidden test at full
points; exercises with nothing but the NotImplementedError of their unsolved functions.

Each notebook is executed once per test session: where the browser test can run (Chromium
and playwright present, conftest.browser_skip_reason), tests/test_browser.py executes the
solution and the exercise of a slice of the notebooks (conftest.BROWSER_SLICE, 01 and 05;
DRILLS_BROWSER_ALL=1: all) in JupyterLab and makes these same checks (tests/notebook_checks.py) on the notebook
JupyterLab saved, and the tests here skip those notebooks saying so. The others are executed
here with nbclient. DRILLS_NOTEBOOKS_NBCLIENT=1 runs all of them here anyway (an author
checking one notebook quickly).
"""

from __future__ import annotations

import os
import shutil
import time

import nbformat
import pytest
from conftest import ROOT, available_assignments, browser_runs
from nbclient import NotebookClient
from notebook_checks import display_problems, exercise_problems, solution_problems

ASSIGNMENTS = available_assignments()
FORCE = os.environ.get("DRILLS_NOTEBOOKS_NBCLIENT") == "1"
BROWSER_SAYS = {
    "solution": "executed in JupyterLab by tests/test_browser.py, which checks no error and every "
    "hidden test at full points, silent on stderr, on the saved notebook "
    "(DRILLS_NOTEBOOKS_NBCLIENT=1 runs it here with nbclient)",
    "exercise": "executed in JupyterLab by tests/test_browser.py, which checks that the only "
    "errors are NotImplementedError, and at least one, on the saved notebook "
    "(DRILLS_NOTEBOOKS_NBCLIENT=1 runs it here with nbclient)",
}


def _skip_if_the_browser_runs_it(kind: str, assignment: str) -> None:
    if not FORCE and browser_runs(kind, assignment):
        pytest.skip(BROWSER_SAYS[kind])


def _execute(path, tmp_path, allow_errors):
    work = tmp_path / path.parent.name
    shutil.copytree(path.parent, work)
    nb = nbformat.read(str(work / path.name), as_version=4)
    client = NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        allow_errors=allow_errors,
        resources={"metadata": {"path": str(work)}},
    )
    # The kernel's own inline backend, as in JupyterLab (conftest sets MPLBACKEND=Agg for the
    # tests' processes, with which a kernel displays no figure).
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    t0 = time.perf_counter()
    client.execute(env=env)
    return nb, time.perf_counter() - t0


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_notebook_runs_top_to_bottom(assignment, tmp_path):
    """Does the source notebook (solutions + hidden tests) execute without any error, at full marks?"""
    _skip_if_the_browser_runs_it("solution", assignment)
    from autograder.notebooks import notebook

    nb, seconds = _execute(notebook.source_path(assignment, ROOT), tmp_path, allow_errors=False)
    problems = solution_problems(nb) + display_problems(nb)
    assert not problems, problems
    print(f"{assignment}: solution executed in {seconds:.1f} s")


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_notebook_fails_only_with_not_implemented(assignment, tmp_path):
    """Does the student version run up to the first unsolved function, failing only with NotImplementedError?"""
    _skip_if_the_browser_runs_it("exercise", assignment)
    from autograder.notebooks import notebook

    nb, _ = _execute(notebook.release_path(assignment, ROOT), tmp_path, allow_errors=True)
    problems = exercise_problems(nb)
    assert not problems, problems
