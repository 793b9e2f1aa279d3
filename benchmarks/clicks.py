"""Check my work, click to result, from an empty outcome cache: per notebook, against its target.

    python benchmarks/clicks.py [--assignments 05_grpo_lld ...] [--after 0 10] [--baseline]

What the button does on a click, without the browser: the kernel's warm-up (the check
server, widgets.warm_up, which every notebook's setup cell starts) begins with an empty
outcome cache; ``--after`` seconds later (each value its own run, with a new cache and a
new server; 0: the click comes at once, the warm-up has only just started) the first click
asks the server for the solution notebook's check, then a second click asks again. Each
time is printed with its ratio to the target (docs/speed.md: 1.0 s for 01-04, 2.5 s for 05 on, on
a 2-core machine, first click included), and the load average before each run, since
other work on the machine slows every figure. The browser adds its own round trip (the
widget's message to the kernel and the rendering: about 0.1 s; tests/test_browser.py
records the real clicks in test-artifacts/browser-timings.json).

``--baseline``: also a click without a server (DRILLS_WARM_CACHE=off: ``drills check`` in a
new process, empty cache), the path every click took before the check server.

Every answer is compared with the one ``drills check --json`` gives in a new process (the
seconds each case took aside): a fast answer that differs is reported as a failure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder import assignments, widgets  # noqa: E402
from autograder.notebooks import notebook  # noqa: E402


def target(assignment: str) -> float:
    """The click target: 2.5 s for a notebook whose grading imports torch (the assignment
    registry says which), 1.0 s for the NumPy notebooks."""
    return 2.5 if assignments.uses_torch(assignment) else 1.0


def _without_times(x):
    if isinstance(x, dict):
        return {k: _without_times(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [_without_times(v) for v in x]
    return x


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def clicks(assignment: str, after: float, workdir: Path) -> tuple[float, float, dict]:
    """Seconds of the first click (``after`` seconds after the warm-up started) and of the
    second; and the report."""
    cache_dir = Path(tempfile.mkdtemp(prefix="cache-", dir=workdir))
    path = workdir / f"{assignment}.ipynb"
    shutil.copy(notebook.source_path(assignment), path)
    os.environ.update(DRILLS_CACHE_DIR=str(cache_dir), JPY_SESSION_NAME=str(path))
    os.environ.pop("DRILLS_WARM_CACHE", None)
    widgets._WARMING.clear()
    proc = widgets.warm_up(assignment)
    if proc is None:
        raise SystemExit("the warm-up did not start (is the outcome cache turned off?)")
    try:
        time.sleep(after)  # the learner's time between the setup cell and the click
        times, reports = [], []
        for _ in range(2):
            t0 = time.perf_counter()
            outcome = widgets.ask_server(assignment, path)
            times.append(time.perf_counter() - t0)
            if outcome is None or outcome.report is None:
                raise SystemExit(f"{assignment}: the check server gave no report ({outcome})")
            reports.append(outcome.report)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait()
        widgets._WARMING.clear()
    if _without_times(reports[0]) != _without_times(reports[1]):
        raise SystemExit(f"{assignment}: the second click reported otherwise than the first")
    return times[0], times[1], reports[0]


def baseline(assignment: str, workdir: Path) -> tuple[float, dict]:
    """A click without a server: `drills check --json` in a new process, empty cache."""
    cache_dir = Path(tempfile.mkdtemp(prefix="cache-", dir=workdir))
    path = workdir / f"{assignment}.ipynb"
    shutil.copy(notebook.source_path(assignment), path)
    os.environ.update(DRILLS_CACHE_DIR=str(cache_dir))
    t0 = time.perf_counter()
    outcome = widgets.run_check(path)
    seconds = time.perf_counter() - t0
    if outcome.report is None:
        raise SystemExit(f"{assignment}: drills check gave no report ({outcome.error})")
    return seconds, outcome.report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assignments", nargs="*", default=None)
    ap.add_argument(
        "--after",
        nargs="*",
        type=float,
        default=[0.0, 10.0],
        help="seconds between the warm-up's start and the first click (one run each)",
    )
    ap.add_argument("--baseline", action="store_true", help="also time drills check alone")
    args = ap.parse_args()
    names = args.assignments or notebook.available_assignments()
    print(f"{os.cpu_count()} CPUs; seconds from the click to the report (ratio to the target)")
    print("notebook | after (s) | load before | first click | second click | target")
    failures = []
    with tempfile.TemporaryDirectory(prefix="drills-clicks-") as tmp:
        for a in names:
            goal = target(a)
            reference = None
            for after in args.after:
                load = _load()
                work = Path(tempfile.mkdtemp(dir=tmp))
                first, second, report = clicks(a, after, work)
                if reference is None:
                    reference = _without_times(baseline(a, work)[1])
                if _without_times(report) != reference:
                    failures.append(f"{a}: the server's report differs from drills check's")
                print(
                    f"{a} | {after:g} | {load} | {first:.2f} ({first / goal:.2f}x) | "
                    f"{second:.2f} ({second / goal:.2f}x) | {goal:g}",
                    flush=True,
                )
            if args.baseline:
                load = _load()
                os.environ["DRILLS_WARM_CACHE"] = "off"
                seconds, _ = baseline(a, Path(tempfile.mkdtemp(dir=tmp)))
                os.environ.pop("DRILLS_WARM_CACHE")
                print(
                    f"{a} | no server (drills check) | {load} | {seconds:.2f} "
                    f"({seconds / goal:.2f}x) | | {goal:g}",
                    flush=True,
                )
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
