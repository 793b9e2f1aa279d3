"""The grading process's peak memory on the largest notebooks a class can hand in.

    python benchmarks/grader_memory.py [--mb 19]

Each notebook is 01's solution with one thing added, up to ``--mb`` MB (the notebook limit is
20 MB), graded alone by ``drills grade`` in its own process; the figure is that process's peak
resident memory as ``run.json`` records it (``parent_peak_rss_mb``: the grader, not the
sandboxed child, which its own ``--memory`` bounds). The baseline is the plain solution, in the
same run. What the grader parses of learner code is bounded per cell and per notebook
(engine/submission.py, MAX_CELL_CHARS and MAX_GRADED_CHARS); the rest of a notebook is only
read as JSON.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.engine.submission import MAX_CELL_CHARS  # noqa: E402

SOLUTION = REPO / "tests" / "fixtures" / "corpus" / "solution.ipynb"
A = "01_exact_kl"


def _literal(chars: int) -> str:
    return "DATA = [" + ",".join("1" for _ in range(max(1, chars // 2 - 5))) + "]\n"


def _shapes(mb: float) -> dict[str, callable]:
    big = int(mb * 1e6)

    def graded(nb, text):
        cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution"))
        cell["source"] = text + "".join(cell["source"])

    def extra(nb, cell):
        nb["cells"].append(cell)

    return {
        "plain solution (baseline)": lambda nb: None,
        f"{mb:g} MB list literal in a graded cell": lambda nb: graded(nb, _literal(big)),
        "list literal just under the cell limit": lambda nb: graded(
            nb, _literal(MAX_CELL_CHARS - 2000)
        ),
        "5 copies of a graded cell just under the limit": lambda nb: [
            extra(
                nb,
                {
                    "cell_type": "code",
                    "metadata": {"nbgrader": {"grade_id": "log_ratios", "solution": True}},
                    "source": _literal(MAX_CELL_CHARS - 2000)
                    + "".join(
                        next(
                            c
                            for c in nb["cells"]
                            if c["metadata"].get("nbgrader", {}).get("grade_id") == "log_ratios"
                        )["source"]
                    ),
                    "outputs": [],
                    "execution_count": None,
                },
            )
            for _ in range(5)
        ],
        f"{mb:g} MB list literal in an ungraded cell": lambda nb: extra(
            nb,
            {
                "cell_type": "code",
                "metadata": {},
                "source": _literal(big),
                "outputs": [],
                "execution_count": None,
            },
        ),
        f"{mb:g} MB markdown cell": lambda nb: extra(
            nb, {"cell_type": "markdown", "metadata": {}, "source": "word " * (big // 5)}
        ),
        f"{mb:g} MB image output": lambda nb: extra(
            nb,
            {
                "cell_type": "code",
                "metadata": {},
                "source": "plot()",
                "execution_count": 1,
                "outputs": [
                    {
                        "output_type": "display_data",
                        "metadata": {},
                        "data": {"image/png": base64.b64encode(os.urandom(big * 3 // 4)).decode()},
                    }
                ],
            },
        ),
    }


def peak(make, tmp: Path) -> tuple[float, float, str]:
    nb = json.loads(SOLUTION.read_text())
    make(nb)
    folder = tmp / "submitted" / "eve" / A
    folder.mkdir(parents=True)
    path = folder / f"{A}.ipynb"
    path.write_text(json.dumps(nb))
    out = tmp / "out"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder.cli",
            "grade",
            str(tmp / "submitted"),
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    run = json.loads((out / "run.json").read_text())
    (row,) = json.loads((out / "results.json").read_text())["submissions"]
    return (
        path.stat().st_size / 1e6,
        run["parent_peak_rss_mb"],
        f"{row['score']:g}/{row['max_score']:g}",
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=19.0)
    args = ap.parse_args(argv)
    print(f"{'notebook':48} {'size MB':>8} {'grader peak MB':>15} {'score':>7}")
    base = None
    for name, make in _shapes(args.mb).items():
        with tempfile.TemporaryDirectory() as tmp:
            size, mb, score = peak(make, Path(tmp))
        base = base if base is not None else mb
        print(f"{name:48} {size:8.2f} {mb:15.1f} {score:>7}   ({mb / base:.1f}x baseline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
