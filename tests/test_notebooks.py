"""Do the notebooks run? Solutions top to bottom without error; exercises with nothing
but the NotImplementedError of their unsolved functions."""

from __future__ import annotations

import shutil
import time

import nbformat
import pytest
from conftest import ROOT, available_assignments
from nbclient import NotebookClient

ASSIGNMENTS = available_assignments()


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


def _errors(nb):
    return [
        (i, o.get("ename"), o.get("evalue"))
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_notebook_runs_top_to_bottom(assignment, tmp_path):
    """Does the source notebook (solutions + hidden tests) execute without any error, at full marks?"""
    from autograder.notebooks import notebook

    nb, seconds = _execute(notebook.source_path(assignment, ROOT), tmp_path, allow_errors=False)
    assert not _errors(nb)
    # every hidden-test cell returned its full points as the execute_result
    for cell in nb.cells:
        if notebook.cell_role(cell) == "test":
            results = [o for o in cell.outputs if o.output_type == "execute_result"]
            assert results, f"{notebook.nbgrader_meta(cell)['grade_id']} returned nothing"
            assert float(results[0]["data"]["text/plain"]) == float(
                notebook.nbgrader_meta(cell)["points"]
            )
            assert not [o for o in cell.outputs if o.output_type == "stream" and o.name == "stderr"]
    print(f"{assignment}: solution executed in {seconds:.1f} s")


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_notebook_fails_only_with_not_implemented(assignment, tmp_path):
    """Does the student version run up to the first unsolved function, failing only with NotImplementedError?"""
    from autograder.notebooks import notebook

    nb, _ = _execute(notebook.release_path(assignment, ROOT), tmp_path, allow_errors=True)
    errors = _errors(nb)
    assert errors, "the exercise has no unsolved function"
    bad = [e for e in errors if e[1] != "NotImplementedError"]
    assert not bad, f"errors other than NotImplementedError: {bad}"
