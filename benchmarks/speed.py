"""Every speed figure of the table in docs/speed.md, per notebook, in one run.

    python benchmarks/speed.py [--assignments 01_exact_kl ...] [--repeat 3]

Prints, per notebook:

- `drills check` wall time on the solution notebook, with an empty outcome cache
  (cold) and with the cache it just filled (warm, median of --repeat runs);
- `nbgrader autograde` seconds per submission (the submissions of
  tests/nbgrader_course.py: solution, stub, one per catalogued mistake);
- `drills grade --jobs 1` and `--jobs 2` seconds per submission on the same
  submissions, and the ratios nbgrader / drills; the outcome cache is warm
  (expected outcomes from the first `drills check`, the known mistakes' from a
  first grading of everything, whose time is printed on its own line);
- the engine's overhead per submission: `--jobs 1` wall time minus the time the
  learner's own functions ran (results.json), divided by the submissions;

then the same for all notebooks graded in one `drills grade` run, and the
start-up figures: `import autograder` and `import autograder.cli` (median wall
time of a fresh interpreter, minus an empty interpreter's). Targets (quiet
2-core machine): check warm <= 1.0 s (01-04), <= 2.5 s (05-06); import
autograder.cli <= 0.3 s; drills grade >= 20x nbgrader at --jobs 1 and >= 30x
at --jobs 2 over all notebooks; overhead <= 0.1 s (01-04). Scores must agree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import grade_vs_nbgrader  # noqa: E402
import nbgrader_course  # noqa: E402

from autograder.notebooks import notebook  # noqa: E402


def _wall(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return seconds


def import_seconds(module: str, env: dict, repeat: int) -> float:
    """Median wall time of `python -c "import MODULE"` minus that of `python -c pass`."""
    empty = [_wall([sys.executable, "-c", "pass"], env) for _ in range(repeat)]
    full = [_wall([sys.executable, "-c", f"import {module}"], env) for _ in range(repeat)]
    return max(0.0, statistics.median(full) - statistics.median(empty))


def check_seconds(assignment: str, env: dict, repeat: int) -> tuple[float, float]:
    """(cold, warm) wall time of `drills check` on the solution notebook."""
    nb = notebook.source_path(assignment, REPO)
    cmd = [sys.executable, "-m", "autograder.cli", "check", str(nb), "--json"]
    cold = _wall(cmd, env)
    warm = statistics.median(_wall(cmd, env) for _ in range(repeat))
    return cold, warm


def learner_seconds(out: Path) -> dict[str, float]:
    """Seconds the learner's functions ran, per assignment, from results.json."""
    res = json.loads((out / "results.json").read_text())
    total: dict[str, float] = {}
    for s in res["submissions"]:
        t = sum(c.get("seconds", 0.0) for f in s["functions"] for c in f["cases"])
        total[s["assignment"]] = total.get(s["assignment"], 0.0) + t
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assignments", nargs="+", default=list(notebook.ASSIGNMENTS))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    agree = True
    with tempfile.TemporaryDirectory(prefix="drills-speed-") as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, DRILLS_CACHE_DIR=str(tmp / "cache"))
        env.pop("DRILLS_SECRET", None)
        load_before = os.getloadavg()
        imp = import_seconds("autograder", env, args.repeat)
        imp_cli = import_seconds("autograder.cli", env, args.repeat)
        course = nbgrader_course.make_course(tmp, args.assignments)
        counts = {}
        for a in args.assignments:
            exercise = course / "exercises" / a / f"{a}.ipynb"
            subs = nbgrader_course.learner_notebooks(a, exercise=exercise)
            for student, nb in subs.items():
                nbgrader_course.submit(course, student, a, nb)
            counts[a] = len(subs)
        checks = {a: check_seconds(a, env, args.repeat) for a in args.assignments}
        nbg = {}
        for a in args.assignments:
            t0 = time.perf_counter()
            nbgrader_course.autograde(course, a)
            nbg[a] = time.perf_counter() - t0
        theirs = {
            (r["student_id"], r["assignment"]): float(r["score"])
            for r in nbgrader_course.export(course)
        }
        # The first grading of a course computes the known mistakes' outcomes of the functions
        # some submission fails (then cached): timed apart, the runs below find them cached.
        first_out = tmp / "out" / "first"
        first, _, _ = grade_vs_nbgrader._drills(course / "submitted", first_out, 1, env)
        per = {}
        for a in args.assignments:
            subdir = tmp / "per" / a / "submitted"
            for student in (course / "submitted").iterdir():
                src = student / a
                if src.is_dir():
                    dst = subdir / student.name / a
                    dst.mkdir(parents=True)
                    for f in src.iterdir():
                        (dst / f.name).write_bytes(f.read_bytes())
            runs = {}
            for jobs in (1, 2):
                out = tmp / "out" / a / str(jobs)
                wall, _, ours = grade_vs_nbgrader._drills(subdir, out, jobs, env)
                runs[jobs] = (wall, ours, learner_seconds(out).get(a, 0.0))
            per[a] = runs
            for k, v in runs[1][1].items():
                agree &= abs(theirs.get(k, float("nan")) - v) < 1e-6
        everything = {}
        for jobs in (1, 2):
            out = tmp / "out" / "all" / str(jobs)
            wall, _, ours = grade_vs_nbgrader._drills(course / "submitted", out, jobs, env)
            everything[jobs] = wall
            agree &= all(abs(theirs[k] - v) < 1e-6 for k, v in ours.items() if k in theirs)
        load_after = os.getloadavg()

    print(
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (2 cores: >2 is load)"
    )
    print(f"import autograder:        {imp:.3f} s")
    print(f"import autograder.cli:    {imp_cli:.3f} s (target <= 0.3 s)")
    print()
    head = (
        "| notebook | submissions | check cold (s) | check warm (s) | nbgrader (s/sub) "
        "| drills --jobs 1 (s/sub) | ratio | drills --jobs 2 (s/sub) | ratio "
        "| overhead (s/sub) |"
    )
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for a in args.assignments:
        n = counts[a]
        (w1, _, learn), (w2, _, _) = per[a][1], per[a][2]
        print(
            f"| {a} | {n} | {checks[a][0]:.2f} | {checks[a][1]:.2f} | {nbg[a] / n:.2f} "
            f"| {w1 / n:.3f} | {nbg[a] / w1:.1f}x | {w2 / n:.3f} | {nbg[a] / w2:.1f}x "
            f"| {(w1 - learn) / n:.3f} |"
        )
    n_all = sum(counts.values())
    t_nb = sum(nbg.values())
    print(
        f"| all, one run | {n_all} | | | {t_nb / n_all:.2f} "
        f"| {everything[1] / n_all:.3f} | {t_nb / everything[1]:.1f}x "
        f"| {everything[2] / n_all:.3f} | {t_nb / everything[2]:.1f}x | |"
    )
    print(
        f"| all, first run (known mistakes computed) | {n_all} | | | {t_nb / n_all:.2f} "
        f"| {first / n_all:.3f} | {t_nb / first:.1f}x | | | |"
    )
    print()
    print("targets: >= 20x at --jobs 1 and >= 30x at --jobs 2 over all notebooks")
    print(f"same scores as nbgrader: {'yes' if agree else 'NO'}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
