"""Do the notebooks run? Solutions top to bottom without error, every hidden test at full
points; exercises with nothing but the NotImplementedError of their unsolved functions.

Each notebook is executed once per test session: where the browser test can run (Chromium
and playwright present, conftest.browser_skip_reason), tests/test_browser.py executes it in
JupyterLab and makes these same checks (tests/notebook_checks.py) on the notebook JupyterLab
saved, and the tests here skip saying so. Elsewhere they execute it with nbclient.
DRILLS_NOTEBOOKS_NBCLIENT=1 runs them here anyway (an author checking one notebook quickly).
"""

from __future__ import annotations

import os
import shutil
import time

import nbformat
import pytest
from conftest import ROOT, available_assignments, browser_skip_reason
from nbclient import NotebookClient
from notebook_checks import exercise_problems, solution_problems

ASSIGNMENTS = available_assignments()

BROWSER_RUNS_THEM = (
    browser_skip_reason() is None and os.environ.get("DRILLS_NOTEBOOKS_NBCLIENT") != "1"
)
SKIP_SOLUTION = pytest.mark.skipif(
    BROWSER_RUNS_THEM,
    reason="executed in JupyterLab by tests/test_browser.py, which checks no error and every "
    "hidden test at full points, silent on stderr, on the saved notebook "
    "(DRILLS_NOTEBOOKS_NBCLIENT=1 runs it here with nbclient)",
)
SKIP_EXERCISE = pytest.mark.skipif(
    BROWSER_RUNS_THEM,
    reason="executed in JupyterLab by tests/test_browser.py, which checks that the only errors "
    "are NotImplementedError, and at least one, on the saved notebook "
    "(DRILLS_NOTEBOOKS_NBCLIENT=1 runs it here with nbclient)",
)


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
    t0 = time.perf_counter()
    client.execute()
    return nb, time.perf_counter() - t0


@pytest.mark.slow
@SKIP_SOLUTION
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_notebook_runs_top_to_bottom(assignment, tmp_path):
    """Does the source notebook (solutions + hidden tests) execute without any error, at full marks?"""
    from autograder.notebooks import notebook

    nb, seconds = _execute(notebook.source_path(assignment, ROOT), tmp_path, allow_errors=False)
    problems = solution_problems(nb)
    assert not problems, problems
    print(f"{assignment}: solution executed in {seconds:.1f} s")


@pytest.mark.slow
@SKIP_EXERCISE
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_notebook_fails_only_with_not_implemented(assignment, tmp_path):
    """Does the student version run up to the first unsolved function, failing only with NotImplementedError?"""
    from autograder.notebooks import notebook

    nb, _ = _execute(notebook.release_path(assignment, ROOT), tmp_path, allow_errors=True)
    problems = exercise_problems(nb)
    assert not problems, problems
