"""The test suite's wall time, quiet and beside busy processes (the suite's two speed targets).

    python benchmarks/suite_under_load.py [--busy 0 2] [--jobs N] [-- PYTEST ARGS]

For each value of ``--busy`` (default: 0, then 2) it starts that many processes that spin
on the CPU, runs the suite as ``make test`` does (``pytest -n JOBS --dist loadfile --no-loadscope-reorder``;
``--jobs 0``: one process) and stops them. It prints, per run, pytest's wall time, its
summary line and the load average sampled every 5 s (min, mean, max of the 1-minute
figure): the suite's own workers count in it, so two busy processes beside the suite's
workers on 2 cores read as a load of 4 or more. The last line gives each run's time as a ratio of
the first run's (the baseline, measured in the same invocation) and against the targets:
5 minutes quiet, 8 under a load of 4. ``--jobs`` defaults to ``make test``'s TEST_JOBS: the
cores, at least 2 and at most 4.

Nothing is asserted; the exit status is pytest's worst. Run it on an otherwise idle
machine: other work moves every figure, and the load average says how much.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_S = {0: 5 * 60, 4: 8 * 60}  # docs/speed.md: quiet, and under a load of 4
# The Makefile's TEST_JOBS: the cores, at least 2 and at most 4.
DEFAULT_JOBS = min(4, max(2, len(os.sched_getaffinity(0))))


def _spin() -> None:  # pragma: no cover - a busy process, killed by the parent
    while True:
        pass


class LoadSampler(threading.Thread):
    """The 1-minute load average every ``every_s`` seconds until stopped."""

    def __init__(self, every_s: float = 5.0) -> None:
        super().__init__(daemon=True)
        self.every_s, self.samples, self._stop_event = every_s, [], threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop_event.wait(self.every_s)

    def stop(self) -> list[float]:
        self._stop_event.set()
        self.join()
        return self.samples


def run_suite(busy: int, jobs: int, extra: list[str]) -> dict:
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(busy)]
    for p in spinners:
        p.start()
    sampler = LoadSampler()
    sampler.start()
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if jobs:
        cmd += ["-n", str(jobs), "--dist", "loadfile", "--no-loadscope-reorder"]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd + extra, cwd=REPO, capture_output=True, text=True)
    finally:
        wall = time.monotonic() - t0
        loads = sampler.stop()
        for p in spinners:
            p.kill()
    summary = next(
        (
            line
            for line in reversed(proc.stdout.splitlines())
            if re.search(r"\d+ (passed|failed)", line)
        ),
        "(no summary line)",
    )
    # pytest's whole output stays on disk: a failure under load must be readable afterwards
    log = REPO / "test-artifacts" / f"suite-under-load-busy{busy}.log"
    log.parent.mkdir(exist_ok=True)
    log.write_text(proc.stdout + proc.stderr)
    failed = [line for line in proc.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    return {
        "busy": busy,
        "wall_s": wall,
        "rc": proc.returncode,
        "summary": summary,
        "loads": loads,
        "failed": failed,
        "log": log,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy", type=int, nargs="+", default=[0, 2])
    parser.add_argument(
        "--jobs", type=int, default=DEFAULT_JOBS, help="pytest-xdist workers (0: none)"
    )
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = parser.parse_args(argv)
    runs = []
    for busy in args.busy:
        r = run_suite(busy, args.jobs, args.pytest_args)
        runs.append(r)
        loads = r["loads"] or [float("nan")]
        print(
            f"busy {busy}: {r['wall_s']:.0f} s, exit {r['rc']}, load min {min(loads):.2f} "
            f"mean {statistics.fmean(loads):.2f} max {max(loads):.2f}; {r['summary']}"
            + "".join(f"\n  {line}" for line in r["failed"])
            + (f"\n  pytest's output: {r['log']}" if r["rc"] else ""),
            flush=True,
        )
    base = runs[0]["wall_s"]
    print(
        "ratio to the first run: "
        + ", ".join(f"busy {r['busy']} {r['wall_s'] / base:.2f}x" for r in runs)
        + f"; targets {TARGET_S[0]} s quiet, {TARGET_S[4]} s at a load of 4"
    )
    return max(r["rc"] for r in runs)


if __name__ == "__main__":
    sys.exit(main())
