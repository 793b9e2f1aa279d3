"""`drills grade` without bubblewrap: the same limits and scores, and a warning that isolation is reduced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_drills

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())

pytestmark = pytest.mark.slow

# Defects the resource limits alone must contain (the others need bwrap's private filesystem).
NAMES = [
    "solution",
    "infinite_loop",
    "memory_bomb",
    "fork_bomb",
    "os_exit",
    "sys_exit",
    "signal_parent",
    "output_flood_fd",
    "forged_records",
]


def test_without_bwrap_limits_hold_and_the_output_warns(tmp_path):
    """With DRILLS_SANDBOX=none: do the limit-only defects get their corpus scores, and do
    stderr and results.json say that isolation is reduced?"""
    subs = tmp_path / "subs"
    subs.mkdir()
    for n in NAMES:
        (subs / f"{n}.ipynb").write_bytes((CORPUS / f"{n}.ipynb").read_bytes())
    out = tmp_path / "out"
    p = run_drills(
        "grade",
        str(subs),
        "--out",
        str(out),
        "--assignment",
        "01_exact_kl",
        "--jobs",
        "2",
        "--timeout",
        "5",
        "--memory",
        "1024",
        timeout=600,
        cwd=tmp_path,
        DRILLS_SANDBOX="none",
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert "isolation is reduced" in p.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["isolation"]["mode"] == "reduced"
    scores = {
        s["student"]: {f["function"]: f["score"] for f in s["functions"]}
        for s in res["submissions"]
    }
    assert scores == {n: EXPECTED["submissions"][n]["scores"] for n in NAMES}
    assert all(any("isolation is reduced" in w for w in s["warnings"]) for s in res["submissions"])
