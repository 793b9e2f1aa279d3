"""How long does each solution notebook take to execute top to bottom?

Targets (DESIGN.md): all six together under 3 minutes on a 2-core CPU; 05 and 06
under 60 s each. The baseline, measured in the same run, is an empty notebook
(kernel start-up and shutdown), so the ratio column is "cost in kernel starts".

    python benchmarks/notebooks_time.py [--spinners N] [--cells S] [ASSIGNMENT...]

``--spinners N`` runs N busy-looping processes for the whole run (a busy lab machine: load
about N on top of the notebook's own); the baseline is then measured under the same load.
``--cells S`` prints every cell that took longer than S seconds, with its first line.
"""

from __future__ import annotations

import os
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


def run(nb, cwd: Path, cells: list | None = None) -> float:
    """Execute ``nb``; the wall seconds. ``cells`` receives (seconds, first line) per cell."""
    started: dict[int, float] = {}

    def start(cell, cell_index, **_):
        started[cell_index] = time.perf_counter()

    def complete(cell, cell_index, **_):
        if cells is not None and cell_index in started:
            first = next((x for x in cell.source.splitlines() if x.strip()), "")[:70]
            cells.append((time.perf_counter() - started[cell_index], cell_index, first))

    t0 = time.perf_counter()
    NotebookClient(
        nb,
        timeout=1200,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
        on_cell_start=start,
        on_cell_executed=complete,
    ).execute()
    return time.perf_counter() - t0


def _spin() -> None:
    # Each its own session, as another user's job is: with the kernel's autogroup scheduling
    # (Linux's default on desktops), busy loops in one session share one group's CPU and
    # barely slow a notebook (measured: 05's probe cell 7.5 s quiet, 8.1 s beside 8 such loops).
    os.setsid()
    while True:
        pass


def main(argv: list[str]) -> None:
    import argparse
    import multiprocessing

    ap = argparse.ArgumentParser()
    ap.add_argument("--spinners", type=int, default=0)
    ap.add_argument("--cells", type=float, default=None)
    ap.add_argument("assignments", nargs="*")
    args = ap.parse_args(argv)
    names = args.assignments or notebook.available_assignments(ROOT)
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.spinners)]
    for p in spinners:
        p.start()
    try:
        _time(names, args.cells, args.spinners)
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        for p in spinners:
            p.terminate()


def _time(names: list[str], cell_threshold: float | None, spinners: int) -> None:
    print(f"{spinners} spinners")
    with tempfile.TemporaryDirectory() as tmp:
        base = run(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")]), Path(tmp))
        print(f"baseline (empty notebook): {base:.2f} s")
        total = 0.0
        for a in names:
            src = notebook.source_path(a, ROOT)
            work = Path(tmp) / a
            shutil.copytree(src.parent, work)
            cells: list = []
            seconds = run(nbformat.read(str(work / src.name), as_version=4), work, cells)
            total += seconds
            target = TARGETS.get(a)
            flag = (
                ""
                if target is None
                else f"  target < {target:.0f} s: {'ok' if seconds < target else 'MISSED'}"
            )
            print(f"{a:<24} {seconds:6.1f} s  ({seconds / base:5.1f}x baseline){flag}")
            if cell_threshold is not None:
                for t, i, first in sorted(cells, reverse=True):
                    if t >= cell_threshold:
                        print(f"    cell {i + 1:3d} {t:6.1f} s  {first}")
        print(f"{'total':<24} {total:6.1f} s  target < 180 s: {'ok' if total < 180 else 'MISSED'}")


if __name__ == "__main__":
    main(sys.argv[1:])
