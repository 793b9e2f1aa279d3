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

import json
import os
import shutil
import time
from queue import Empty

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


# A phase (the kernel's start, one cell, the kernel's shutdown) that waits this long is a
# stall, not a slow machine: the longest phase, notebook 06's probe cell, takes 12-16 s on 2
# cores at a load of 2-5 and 28 s at 8, and nbclient's own per-cell timeout (300 s) would let a
# stall of nearly five minutes pass unnoticed. The guard names the phase that waited.
STALL_S = 240.0
# The stall this guards against, seen in fresh-clone runs (a ~300 s wait in a test that passed)
# and caught here: a cell's reply was in the socket while both the test and the kernel sat idle
# in their event loops, until nbclient's one poll of the whole cell timeout (300 s) ended and
# its final check found the message. A wake-up of pyzmq's asyncio poller was missed (an
# edge-triggered ZMQ_FD; zeromq/pyzmq#1558 describes the same symptom: a poll that returns
# the message only at its timeout). Polling in slices of POLL_SLICE_S bounds such a miss to
# one slice; the reply and every output are read exactly as before.
POLL_SLICE_S = 1.0


def _poll_in_slices(channel) -> None:
    """Make ``channel.get_msg(timeout=T)`` poll in slices of at most POLL_SLICE_S seconds until
    T has passed (for ever when T is None), so that a missed wake-up costs one slice."""
    whole = channel.get_msg

    async def get_msg(timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = POLL_SLICE_S
            if deadline is not None:
                left = min(left, max(0.0, deadline - time.monotonic()))
            try:
                return await whole(timeout=left)
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    channel.get_msg = get_msg


PHASES_LOG = ROOT / "test-artifacts" / "notebook-phases.jsonl"


class _Phases:
    """When each phase of one notebook's execution began and ended (monotonic seconds from the
    call), through nbclient's hooks: ``kernel start`` (launch to the kernel's first reply),
    ``cell N`` (sent to replied), ``shutdown`` (the last code cell's reply to the kernel's end)."""

    def __init__(self, label: str):
        self.label = label
        self.t0 = time.monotonic()
        self.open: tuple[str, float] | None = ("kernel start", 0.0)
        self.done: list[tuple[str, float, float]] = []

    def _now(self) -> float:
        return time.monotonic() - self.t0

    def begin(self, name: str) -> None:
        self.end()
        self.open = (name, self._now())

    def end(self) -> None:
        if self.open is not None:
            self.done.append((self.open[0], self.open[1], self._now()))
            self.open = None

    def hooks(self, last_code_cell: int) -> dict:
        def executed(cell_index, **_):
            # nbclient calls on_notebook_complete after the kernel has shut down: the shutdown
            # phase opens when the last code cell has replied.
            if cell_index == last_code_cell:
                self.begin("shutdown")
            else:
                self.end()

        return {
            "on_notebook_start": lambda **_: self.end(),
            "on_cell_execute": lambda cell_index, **_: self.begin(f"cell {cell_index}"),
            "on_cell_executed": executed,
            "on_notebook_complete": lambda **_: self.end(),
        }

    def table(self) -> str:
        rows = [f"{n} {b:.1f}-{e:.1f} s ({e - b:.1f} s)" for n, b, e in self.done]
        if self.open is not None:
            rows.append(f"{self.open[0]} from {self.open[1]:.1f} s, not finished")
        return "; ".join(rows)

    def stalls(self) -> list[str]:
        return [f"{n} waited {e - b:.0f} s" for n, b, e in self.done if e - b > STALL_S]

    def log(self) -> None:
        PHASES_LOG.parent.mkdir(exist_ok=True)
        phases = [[n, round(b, 3), round(e, 3)] for n, b, e in self.done]
        row = {"notebook": self.label, "pid": os.getpid(), "phases": phases}
        with PHASES_LOG.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")


def _runs(cell) -> bool:
    return cell.cell_type == "code" and bool(cell.source.strip())


def _execute(path, tmp_path, allow_errors):
    work = tmp_path / path.parent.name
    shutil.copytree(path.parent, work)
    nb = nbformat.read(str(work / path.name), as_version=4)
    phases = _Phases(f"{path.parent.parent.name}/{path.name}")
    client = NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        allow_errors=allow_errors,
        resources={"metadata": {"path": str(work)}},
        **phases.hooks(last_code_cell=max(i for i, c in enumerate(nb.cells) if _runs(c))),
    )
    started = client.on_notebook_start

    def on_notebook_start(**kw):  # the kernel client exists from here on
        _poll_in_slices(client.kc.shell_channel)
        _poll_in_slices(client.kc.iopub_channel)
        started(**kw)

    client.on_notebook_start = on_notebook_start
    # The kernel's own inline backend, as in JupyterLab (conftest sets MPLBACKEND=Agg for the
    # tests' processes, with which a kernel displays no figure).
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    t0 = time.perf_counter()
    try:
        client.execute(env=env)
    except Exception as e:
        phases.end()
        phases.log()
        raise AssertionError(
            f"{path.name} failed ({type(e).__name__}: {e}); phases: {phases.table()}"
        ) from e
    phases.end()
    phases.log()
    stalls = phases.stalls()
    assert not stalls, (
        f"{path.name}: {', '.join(stalls)} (a stall: more than {STALL_S:.0f} s in one phase); "
        f"phases: {phases.table()}"
    )
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
