"""`drills grade` of this working tree against an earlier revision, in one run, turn about.

    python benchmarks/grade_before_after.py --before REV [--rounds 3] [--jobs 1]
                                            [--submitted DIR] [--assignments 01_exact_kl ...]

``--before`` may also name a folder that holds the earlier version's files (for a user who
cannot read this repository's .git; tests/unprivileged.py builds a course copy such a user can
run). The machine this project is developed on is shared, and its load moves a wall time by a
factor of two from one minute to the next; a figure measured today against one measured
yesterday says little. This script grades the same submissions with both versions in the
same minutes: REV is extracted with `git archive` into a temporary folder and run with this
interpreter (its packages), each version with an outcome cache of its own, filled by an
untimed first run; then ``--rounds`` timed runs of each, before and after in turn, each
from scratch into a new output folder (`drills grade --jobs J`, as a user runs it).

The submissions are benchmarks/grade_vs_nbgrader.py's (tests/nbgrader_course.py: solution,
stub, one notebook per catalogued mistake index, every assignment: 100), built once, or
``--submitted``, a folder laid out as submitted/<student>/<assignment>/.

Prints, per run: wall seconds, CPU seconds of the grader and everything it started (user +
sys of its children, sandboxes included), the 1-minute load average before it, and the
stages run.json records (read, sandbox, score, assemble); then the medians, the ratio
before/after of each, and whether both versions wrote the same grades.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


def _submissions(folder: Path, assignments: list[str]) -> Path:
    import nbgrader_course

    course = folder / "course"
    for a in assignments:
        for student, nb in nbgrader_course.learner_notebooks(a).items():
            nbgrader_course.submit(course, student, a, nb)
    return course / "submitted"


def _grade(tree: Path, cache: Path, submitted: Path, out: Path, jobs: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRILLS_")}
    env.update(PYTHONPATH=str(tree), DRILLS_COURSE_ROOT=str(tree), DRILLS_CACHE_DIR=str(cache))
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "grade", str(submitted), "--out", str(out)]
        + ["--jobs", str(jobs)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"drills grade ({tree}) failed:\n{p.stderr[-3000:]}")
    timing = json.loads((out / "run.json").read_text())["timing"]
    with (out / "grades.csv").open(newline="") as f:
        grades = sorted(tuple(r.values()) for r in csv.DictReader(f))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "load": load, "timing": timing, "grades": grades}


def main(argv: list[str] | None = None) -> int:
    from autograder.notebooks import notebook

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--before",
        required=True,
        help="a git revision of this repository, or a folder holding that version's files "
        "(where the user running this cannot read the repository's .git: another user)",
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--submitted", type=Path, help="graded instead of the built submissions")
    ap.add_argument("--assignments", nargs="+", default=list(notebook.ASSIGNMENTS))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="drills-before-after-") as tmp:
        top = Path(tmp)
        old = Path(args.before).resolve()
        if not old.is_dir():
            old = top / "before"
            old.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(REPO), "archive", args.before], capture_output=True, check=True
            )
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
        submitted = (args.submitted or _submissions(top, args.assignments)).resolve()
        n = sum(1 for _ in Path(submitted).glob("*/*/*.ipynb"))
        trees = {"before": old, "after": REPO}
        runs: dict[str, list[dict]] = {"before": [], "after": []}
        for name, tree in trees.items():  # untimed: fills each version's outcome cache
            _grade(tree, top / f"cache-{name}", submitted, top / f"warm-{name}", args.jobs)
        for i in range(args.rounds):
            for name, tree in trees.items():
                out = top / f"out-{name}-{i}"
                r = _grade(tree, top / f"cache-{name}", submitted, out, args.jobs)
                runs[name].append(r)
                stages = " ".join(
                    f"{k.removesuffix('_s')} {r['timing'].get(k, float('nan')):.1f}"
                    for k in ("read_and_prepare_s", "sandbox_s", "score_s", "assemble_s")
                )
                print(
                    f"round {i + 1} {name:6s}: {r['wall']:6.1f} s wall, {r['cpu']:6.1f} s CPU, "
                    f"load {r['load']:4.1f} before; {stages}",
                    flush=True,
                )
    print(f"submissions: {n}; drills grade --jobs {args.jobs}; user {os.geteuid()}")
    med = {
        name: {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu")}
        for name, rs in runs.items()
    }
    for k in ("wall", "cpu"):
        b, a = med["before"][k], med["after"][k]
        print(
            f"median {k:4s}: before {b:6.1f} s ({b / n:.3f} s/sub), "
            f"after {a:6.1f} s ({a / n:.3f} s/sub): {b / a:.2f}x"
        )
    same = all(r["grades"] == runs["before"][0]["grades"] for rs in runs.values() for r in rs)
    print(f"same grades.csv rows: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
