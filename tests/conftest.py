"""Shared fixtures. Tests are fast by default; slow ones are marked and still run by `make test`."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent

# nbgrader shells out to `alembic` by name; notebooks run `drills`: keep this venv first on PATH.
os.environ["PATH"] = str(VENV_BIN) + os.pathsep + os.environ.get("PATH", "")
# Grading must not depend on a secret left in the caller's environment.
os.environ.pop("DRILLS_SECRET", None)
os.environ.pop("DRILLS_SECRET_FILE", None)
os.environ.setdefault("MPLBACKEND", "Agg")
# One outcome cache per test session, not the user's: tests start from nothing and share it.
if "DRILLS_CACHE_DIR" not in os.environ:
    os.environ["DRILLS_CACHE_DIR"] = tempfile.mkdtemp(prefix="drills-test-cache-")
    atexit.register(shutil.rmtree, os.environ["DRILLS_CACHE_DIR"], True)

# One probe cache per test session (tiny_model/memo.py), shared by the workers and the notebook
# kernels they start: the pooled probes of notebooks 05 and 06 and of test_tiny_model_probe.py
# are the same computations.
if "TINY_MODEL_PROBE_CACHE" not in os.environ:
    os.environ["TINY_MODEL_PROBE_CACHE"] = tempfile.mkdtemp(prefix="drills-test-probes-")
    atexit.register(shutil.rmtree, os.environ["TINY_MODEL_PROBE_CACHE"], True)

# Deterministic torch on CPU: one thread count for every test.
try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


# DRILLS_ONLY=02_clipped_estimators[,…] (what `drills author-check` sets): the tests that run
# per notebook run for those notebooks only, and the slices (nbgrader's round trip, the browser)
# are those notebooks instead of SLICE below, so an author's check spends no time on the others.
ONLY = tuple(a for a in os.environ.get("DRILLS_ONLY", "").replace(",", " ").split() if a)


def available_assignments() -> list[str]:
    from autograder.notebooks import notebook

    found = notebook.available_assignments(ROOT)
    return [a for a in found if a in ONLY] if ONLY else found


def catalogued_mistakes(conceptual_only: bool = False) -> list[tuple[str, str, str]]:
    """(assignment, function, mistake id) of every catalogued mistake, for parametrising."""
    from autograder import assignments

    return [
        (a, f.name, m.id)
        for a in available_assignments()
        for f in assignments.get(a).functions
        for m in f.mistakes
        if not (conceptual_only and m.validation)
    ]


def benchmark_module(name: str):
    """benchmarks/<name>.py imported as a module (the folder is not a package), for a test of
    its functions."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_drills(*args: str, timeout: float = 1200, cwd=None, prefix=(), **env_extra: str):
    """`drills ARGS` in a fresh process (as a user runs it), with no secret from our environment;
    ``prefix``: a command it runs under (tests/namespace_less.py's, for a container's rules)."""
    env = dict(os.environ, **env_extra)
    env.pop("DRILLS_SECRET", None)
    return subprocess.run(
        [*prefix, sys.executable, "-m", "autograder.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=cwd,
    )


def load_factor(cap: float) -> float:
    """How many times busier than its cores this machine is now (1 when quiet, at most ``cap``).

    For a test whose subject is a wall-clock limit (a step's timeout), to scale the limit it
    passes so that a loaded machine does not stop a healthy step. Never used to assert on time.
    """
    try:
        busy = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # pragma: no cover - no load average on this platform
        busy = 1.0
    return min(max(busy, 1.0), cap)


# Debian's Chromium (or $DRILLS_CHROMIUM) drives tests/test_browser.py.
CHROMIUM = Path(os.environ.get("DRILLS_CHROMIUM", "/usr/bin/chromium"))


def browser_skip_reason() -> str | None:
    """Why tests/test_browser.py cannot run here (no Chromium, no playwright); None when it can.
    tests/test_notebooks.py runs its nbclient checks on what the browser does not run
    (browser_runs)."""
    if not CHROMIUM.exists():
        return (
            f"browser test skipped: no Chromium at {CHROMIUM} "
            "(install Debian's `chromium` package, as .ci/run does, or set DRILLS_CHROMIUM)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "browser test skipped: the `playwright` package is missing (pip install -e '.[dev]')"
    return None


# Sweeps and slices. `make test` runs a slice of each end-to-end sweep that costs minutes
# (nbgrader's round trip, the browser, ...): the first notebook and the first tiny-model
# notebook, where the sweep runs all seven. Each sweep has its own switch (DRILLS_BROWSER_ALL=1,
# DRILLS_AGREEMENT_ALL=1, ...); DRILLS_SWEEP=1 turns on every one (`make sweep`). docs/speed.md,
# "What make test runs and what the sweep adds", lists them.
SLICE = ONLY or ("01_exact_kl", "05_grpo_lld")


def sweep(switch: str) -> bool:
    """Is the full sweep named by the environment variable ``switch`` on? DRILLS_SWEEP=1 turns
    on all of them."""
    return os.environ.get("DRILLS_SWEEP") == "1" or os.environ.get(switch) == "1"


# The notebooks the browser test runs by default: the solution and the exercise of each
# notebook of the slice (a solved and an unsolved exploration, their widgets, "Check my work" at
# full marks and at 0). tests/test_notebooks.py executes the other ten with nbclient and makes
# the same checks on the executed notebook (tests/notebook_checks.py). JupyterLab and Chromium
# add to each notebook's own run: an exercise took 30-36 s of a two-worker `make test` in the
# browser and a few seconds with nbclient; the seven solutions took 204 s of CPU in the browser
# with two exercises, and 154 s with nbclient alone (2-core AMD, 2026-12-02).
# DRILLS_BROWSER_ALL=1 runs all fourteen notebooks in the browser.
BROWSER_SLICE = SLICE


def browser_notebook(assignment: str) -> bool:
    """Are the notebooks of ``assignment`` among those tests/test_browser.py runs?"""
    return sweep("DRILLS_BROWSER_ALL") or assignment in BROWSER_SLICE


def browser_runs(kind: str, assignment: str) -> bool:
    """Does tests/test_browser.py execute ``<kind>s/<assignment>`` in this session (so
    tests/test_notebooks.py need not)? ``kind``: "exercise" or "solution"."""
    assert kind in ("exercise", "solution"), kind
    if browser_skip_reason() is not None:
        return False
    return browser_notebook(assignment)


# The files that take longest, longest first: seconds of each file's tests among the 60 slowest
# of a `make test` (two workers, 2-core AMD, 2026-12-03, 517 s in all, other work on the
# machine). `make test` hands whole files to its workers in collection order (pytest-xdist
# --dist loadfile --no-loadscope-reorder), so starting with these lets the hundreds of short
# files fill in at the end instead of one worker finishing a long file alone. The real Slurm
# test waits most of its time on Slurm (22 s of CPU in 62 s alone): started early, its waits
# overlap the notebooks' work. The order changes no result: every test is independent of
# which file ran before it.
LONGEST_FIRST = (
    "test_notebooks.py",  # 170 s: ten notebooks with nbclient (06's solution 66 s)
    "test_browser.py",  # 149 s: JupyterLab, Chromium, notebooks 01 and 05
    "test_warm_worker.py",  # 112 s
    "test_grade_corpus.py",  # 82 s
    "test_course_form.py",  # 78 s alone (2026-12-06): builds the course form; a venv as a user
    "test_slurm_real.py",  # 35 s, waiting on Slurm
    "test_course_run.py",  # 38 s
    "test_nbgrader_agreement.py",  # 29 s
    "test_learner_feedback.py",  # 29 s
    "test_release.py",  # 15 s
    "test_tiny_model.py",  # 15 s
    "test_one_slip_one_charge.py",  # 14 s
    "test_tiny_model_probe.py",  # 9 s
    "test_grade_determinism.py",  # 8 s
    "test_tiny_model_training.py",  # 7 s
    "test_tiny_model_beyond.py",  # 7 s
)


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest as found
