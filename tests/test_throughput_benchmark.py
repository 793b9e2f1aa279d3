"""benchmarks/grade_throughput.py on a slice of 12 submissions (the full run takes long)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

pytestmark = pytest.mark.slow


def test_throughput_benchmark_prints_its_figures_on_a_slice(capsys):
    """On 12 generated submissions of every assignment: does the benchmark grade them all
    and print throughput, the parent's peak memory and the projection for a course? (Counts
    follow the registered assignments: a hard-coded six broke when notebook 07 came.)"""
    import grade_throughput

    from autograder.notebooks.notebook import ASSIGNMENTS

    n = len(ASSIGNMENTS)

    assert grade_throughput.main(["--sizes", "12", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert f"12 submissions of {n} assignments" in out
    num = r"([\d.]+)"
    row = re.search(
        rf"^\s+12\s+{num}\s+{num}\s+{num}\s+{num}\s+(\d+)/(\d+)\s+{num}\s+{num}\s*$", out, re.M
    )
    assert row, out
    assert float(row.group(7)) > 0  # the parent's peak memory, measured by the run itself
    assert int(row.group(5)) + int(row.group(6)) >= 12  # every submission ran warm or cold
    assert re.search(r"user \S+ \(uid \d+\)", out) and "load average before grading" in out
    assert "could not be graded" not in out
    assert re.search(rf"projected for 1,000 students x {n} notebooks .*: [\d.]+ min", out)
    assert len(re.findall(r"^  \d\d_\w+\s+[\d.]+ s$", out, re.M)) == n
