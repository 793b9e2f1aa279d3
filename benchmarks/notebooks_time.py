"""How long does each solution notebook take to execute top to bottom?

Targets (DESIGN.md): all six together under 3 minutes on a 2-core CPU; 05 and 06
under 60 s each. The baseline, measured in the same run, is an empty notebook
(kernel start-up and shutdown), so the ratio column is "cost in kernel starts".

    python benchmarks/notebooks_time.py [ASSIGNMENT...]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.notebooks import notebook  # noqa: E402

TARGETS = {"05_grpo_lld": 60.0, "06_nthr": 60.0}


def run(nb, cwd: Path) -> float:
    t0 = time.perf_counter()
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    ).execute()
    return time.perf_counter() - t0


def main(argv: list[str]) -> None:
    names = argv or notebook.available_assignments(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        base = run(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")]), Path(tmp))
        print(f"baseline (empty notebook): {base:.2f} s")
        total = 0.0
        for a in names:
            src = notebook.source_path(a, ROOT)
            work = Path(tmp) / a
            shutil.copytree(src.parent, work)
            seconds = run(nbformat.read(str(work / src.name), as_version=4), work)
            total += seconds
            target = TARGETS.get(a)
            flag = (
                ""
                if target is None
                else f"  target < {target:.0f} s: {'ok' if seconds < target else 'MISSED'}"
            )
            print(f"{a:<24} {seconds:6.1f} s  ({seconds / base:5.1f}x baseline){flag}")
        print(f"{'total':<24} {total:6.1f} s  target < 180 s: {'ok' if total < 180 else 'MISSED'}")


if __name__ == "__main__":
    main(sys.argv[1:])
