"""`drills grade ARGS` as a user runs it (a fresh process, no secret from the caller), timed."""

from __future__ import annotations

import os
import subprocess
import sys
import time


def timed_grade(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    """Wall-clock seconds of `drills grade ARGS` and its process; exits if it fails."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRILLS_SECRET")}
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "grade", *args],
        capture_output=True,
        text=True,
        env=env,
    )
    seconds = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"drills grade failed:\n{p.stderr[-3000:]}")
    return seconds, p
