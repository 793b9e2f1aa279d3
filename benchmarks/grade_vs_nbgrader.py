"""Seconds per submission: `drills grade` versus `nbgrader autograde`, on the same submissions.

    python benchmarks/grade_vs_nbgrader.py [--assignments 01_exact_kl 03_sum_vs_mean]

Builds the submissions of tests/nbgrader_course.py (solution, stub, one notebook
per catalogued mistake index) for the given assignments, puts them in one
nbgrader course, then times, each as its command line would run:

    nbgrader autograde <assignment>   (every assignment, one after the other)
    drills warm <assignments>          (not timed: what a course runs ahead of time)
    drills grade submitted/ --jobs 1
    drills grade submitted/ --jobs 2

and prints seconds per submission, the ratio nbgrader / drills (targets: at
least 20 at --jobs 1 and 30 at --jobs 2 over all the notebooks), the speed-up
of --jobs 2 over --jobs 1, and whether the scores agree. benchmarks/speed.py
prints the same per notebook, with `drills check` and import times.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import nbgrader_course  # noqa: E402
from drills_run import timed_grade  # noqa: E402

from autograder.notebooks import notebook  # noqa: E402


def _drills(
    submitted: Path, out: Path, jobs: int, env: dict | None = None
) -> tuple[float, float, dict]:
    seconds, p = timed_grade(str(submitted), "--out", str(out), "--jobs", str(jobs), env=env)
    with (out / "grades.csv").open(newline="") as f:
        # an empty score is no grade (not submitted, or ungradable); nbgrader's export says 0
        scores = {
            (r["student_id"], r["assignment"]): float(r["score"] or 0.0) for r in csv.DictReader(f)
        }
    m = re.search(r"sandboxed runs ([0-9.]+) s", p.stdout)
    return seconds, float(m.group(1)) if m else float("nan"), scores


def _warm(assignments: list[str]) -> float:
    """Seconds of `drills warm ASSIGNMENTS` (no secret: the secret the timed runs use)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRILLS_SECRET")}
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "autograder.cli", "warm", *assignments], env=env, check=True
    )
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assignments", nargs="+", default=list(notebook.ASSIGNMENTS))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="drills-bench-") as tmp:
        course = nbgrader_course.make_course(Path(tmp), args.assignments)
        submitted = set()
        for a in args.assignments:
            exercise = course / "exercises" / a / f"{a}.ipynb"
            for student, nb in nbgrader_course.learner_notebooks(a, exercise=exercise).items():
                nbgrader_course.submit(course, student, a, nb)
                submitted.add((student, a))
        n = len(submitted)
        t0 = time.perf_counter()
        for a in args.assignments:
            nbgrader_course.autograde(course, a)
        t_nb = time.perf_counter() - t0
        theirs = {
            (r["student_id"], r["assignment"]): float(r["score"])
            for r in nbgrader_course.export(course)
        }
        # The outcome cache is keyed by the grader's code: after any change of it the first
        # run computes every known mistake's outcomes. A course fills it ahead of time with
        # `drills warm` (untimed here, as there), so both timed runs find it filled.
        t_warm = _warm(args.assignments)
        t1, s1, ours = _drills(course / "submitted", Path(tmp) / "out1", 1)
        t2, s2, ours2 = _drills(course / "submitted", Path(tmp) / "out2", 2)
    same = (
        set(theirs) == set(ours)
        and all(abs(theirs[k] - ours[k]) < 1e-6 for k in theirs)
        and ours == ours2
    )
    print(f"submissions:              {n} ({', '.join(args.assignments)})")
    print(f"nbgrader autograde:       {t_nb / n:.3f} s per submission ({t_nb:.1f} s)")
    print(f"drills warm (untimed):    {t_warm:.1f} s, the outcome cache filled ahead of time")
    for jobs, t, sb in ((1, t1, s1), (2, t2, s2)):
        print(
            f"drills grade --jobs {jobs}:    {t / n:.3f} s per submission "
            f"({t:.1f} s; sandboxed runs {sb:.1f} s)"
        )
    print(
        f"nbgrader / drills:        {t_nb / t1:.1f}x (--jobs 1), {t_nb / t2:.1f}x (--jobs 2); "
        "targets >= 20x, >= 30x"
    )
    print(f"--jobs 2 over --jobs 1:   {t1 / t2:.2f}x whole command, {s1 / s2:.2f}x sandboxed runs")
    print(f"same scores:              {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
