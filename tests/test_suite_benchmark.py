"""benchmarks/suite_under_load.py on a slice: the figures the suite's speed targets are read from."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT


def test_suite_benchmark_prints_a_loaded_run_with_its_load_and_ratio():
    """Catches a benchmark that reports no load beside its time, loses pytest's summary or its
    exit status, or leaves a busy process spinning after it returns."""
    # What was running before (this suite may itself run under the benchmark, whose own
    # processes and spinners match the same name): only new ones count as left behind.
    before = _named("suite_under_load")
    proc = subprocess.run(
        [sys.executable, "benchmarks/suite_under_load.py", "--busy", "1", "--jobs", "0", "--",
         "tests/test_changelog.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    runs = [x for x in lines if x.startswith("busy ")]
    assert len(runs) == 1, proc.stdout
    for busy, line in zip((1,), runs):
        assert re.match(
            rf"busy {busy}: \d+ s, exit 0, load min [\d.]+ mean [\d.]+ max [\d.]+; ", line
        )
        assert re.search(r"\d+ passed", line), line
    assert re.match(r"ratio to the first run: busy 1 1\.00x; targets", lines[-1])
    leftover = _named("suite_under_load") - before
    assert not leftover, f"busy processes left running: {sorted(leftover)}"


def _named(pattern: str) -> set[str]:
    """The pids of the processes whose command line holds ``pattern``."""
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout
    return set(out.split())


def test_every_file_scheduled_first_exists():
    """Catches a renamed or removed test file left in conftest.LONGEST_FIRST: the long file
    under its new name would drop to the end of `make test`'s order, silently."""
    from conftest import LONGEST_FIRST

    missing = [name for name in LONGEST_FIRST if not (ROOT / "tests" / name).is_file()]
    assert missing == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
