"""What the probes cost a check: `drills check` on wrong submissions with and without them.

    python benchmarks/relation_probes_speed.py [--set blind3] [--repeat 3] [--jobs 1]

A probe (autograder/scoring/relations.py) runs the learner's function again on inputs changed
in one stated way, after every graded check and only for a function that failed one; in the
sandbox that is one more program run. This builds, for each file of a blind set (one wrong
function each), the source notebook with that function's cell replaced by the file, grades
every notebook with `drills check`'s grader twice per round (probes on, probes off, in
alternating order), and prints the median seconds per notebook of each and their ratio, and
the same for the solution notebooks (which fail nothing, so run no probe: a ratio of about 1).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.course import grade_cli  # noqa: E402
from autograder.notebooks import notebook  # noqa: E402


def _header(path: Path) -> dict[str, str]:
    doc = path.read_text(encoding="utf-8").split('"""')[1]
    out = {}
    for line in doc.strip().splitlines():
        key, _, value = line.partition(":")
        out[key.strip()] = value.strip()
    return out


def _notebook_with(assignment: str, function: str, source: str | None) -> dict:
    """The source notebook, its solution cells kept, the cell defining ``function`` replaced by
    ``source`` (None: the solution itself)."""
    nb = notebook.read(notebook.source_path(assignment))
    if source is not None:
        for c in nb.cells:
            if c.cell_type == "code" and f"def {function}(" in c.source:
                c.source = source
                break
        else:
            raise SystemExit(f"{assignment}: no cell defines {function}")
    return json.loads(json.dumps(nb))


def _grade(paths: list[tuple[str, Path]], probes: bool, grader) -> list[float]:
    original = grade_cli.Grader._run_probes
    if not probes:
        grade_cli.Grader._run_probes = lambda self, w, run, specs: {}
    try:
        times = []
        for assignment, path in paths:
            t0 = time.perf_counter()
            r = grade_cli.check_notebook(path, assignment, grader=grader)
            times.append(time.perf_counter() - t0)
            if r.error:
                raise SystemExit(f"{path.name}: {r.error}")
        return times
    finally:
        grade_cli.Grader._run_probes = original


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="blind3", help="the blind set under benchmarks/")
    ap.add_argument("--repeat", type=int, default=3, help="rounds (each grades both ways)")
    args = ap.parse_args(argv)
    folder = REPO / "benchmarks" / args.set
    with tempfile.TemporaryDirectory() as tmp:
        wrong, right = [], []
        seen = set()
        for k, f in enumerate(sorted(folder.glob("*.py"))):
            head = _header(f)
            a, fn = head["notebook"], head["function"]
            path = Path(tmp) / f"{k:02d}-{a}.ipynb"
            path.write_text(json.dumps(_notebook_with(a, fn, f.read_text())), encoding="utf-8")
            wrong.append((a, path))
            if a not in seen:
                seen.add(a)
                sol = Path(tmp) / f"solution-{a}.ipynb"
                sol.write_text(json.dumps(_notebook_with(a, fn, None)), encoding="utf-8")
                right.append((a, sol))
        grader = grade_cli.check_grader()
        _grade(wrong[:2] + right[:1], True, grader)  # warm: outcomes, workers, imports
        on: dict[str, list[float]] = {"wrong": [], "right": []}
        off: dict[str, list[float]] = {"wrong": [], "right": []}
        for r in range(args.repeat):
            order = (True, False) if r % 2 == 0 else (False, True)
            for probes in order:
                for name, paths in (("wrong", wrong), ("right", right)):
                    t = _grade(paths, probes, grader)
                    (on if probes else off)[name].append(statistics.median(t))
    for name in ("wrong", "right"):
        a, b = statistics.median(on[name]), statistics.median(off[name])
        n = len(wrong) if name == "wrong" else len(right)
        print(
            f"{name:5s} ({n} notebooks): {a:.3f} s per check with probes, {b:.3f} s without: "
            f"{a / b:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
