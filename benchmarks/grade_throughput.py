"""Throughput and parent memory of `drills grade` on a generated class.

    python benchmarks/grade_throughput.py [--sizes 100 300 1000] [--jobs 2] [--seed 0]
                                          [--broken 0.1]

Writes max(sizes) submissions (tests/class_fixture.py `mixed_plan`: students hand in the
assignments in turn; 40 % correct, 20 % blank, 40 % one catalogued mistake, replayed
on the student's own generated inputs, of which ``--broken`` (a fraction of all) are
instead notebooks with a syntax error in a graded cell), then grades the first n of them
for each n in ``--sizes`` with `drills grade --jobs J`, each run from scratch into its own
folder, and prints who ran it (grading as an ordinary user is what courses do) and the
machine's load, then per run: submissions per second, the sandboxed time in all and per
submission, how many sandboxed runs were warm and cold, and the peak resident memory of
the grading process (the parent; from run.json, measured by the run itself). Then,
against the smallest run measured in the same invocation (the baseline):

- the growth of the parent's peak memory (a streaming grader stays flat), and
- the projected time for a course of 1,000 students x every notebook at the largest run's
  rate, per submission and per assignment (from results.jsonl: child seconds).

Timings depend on the machine's load: run on a quiet machine, or say what else ran.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import class_fixture  # noqa: E402
from drills_run import timed_grade  # noqa: E402

from autograder.notebooks.notebook import ASSIGNMENTS  # noqa: E402

COURSE = 1000 * len(ASSIGNMENTS)


def _grade(paths: list[Path], out: Path, jobs: int) -> dict:
    wall, _ = timed_grade(*map(str, paths), "--out", str(out), "--jobs", str(jobs))
    run = json.loads((out / "run.json").read_text())
    pool = run.get("warm_workers") or {}
    per_assignment: dict[str, list[float]] = defaultdict(list)
    with (out / "results.jsonl").open() as f:
        for line in f:
            item = json.loads(line)
            per_assignment[item["assignment"]].append(item["child"]["seconds"])
    return {
        "n": len(paths),
        "wall": wall,
        "sandbox": run["timing"].get("sandbox_s", float("nan")),
        "rss": run["parent_peak_rss_mb"],
        "child_seconds": {a: sum(v) / len(v) for a, v in per_assignment.items()},
        "graded": run["stats"]["graded"],
        "errors": run["stats"]["could_not_grade"],
        "warm": pool.get("warm_jobs", 0),
        "cold": pool.get("cold_jobs", 0),
        "unavailable": pool.get("unavailable"),
        "load": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--broken", type=float, default=0.1, help="fraction of broken notebooks")
    args = ap.parse_args(argv)
    sizes = sorted(args.sizes)
    with tempfile.TemporaryDirectory(prefix="drills-throughput-") as tmp:
        plan = class_fixture.mixed_plan(sizes[-1], args.seed, args.broken)
        t0 = time.perf_counter()
        class_fixture.write_class(Path(tmp), plan)
        paths = [Path(tmp) / "submitted" / s / a / f"{a}.ipynb" for s, a, _ in plan]
        kinds = defaultdict(int)
        for _, _, kind in plan:
            kinds["mistake" if kind.startswith("mistakes-") else kind] += 1
        print(
            f"class: {len(plan)} submissions of {len({a for _, a, _ in plan})} assignments "
            f"({', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))}), "
            f"written in {time.perf_counter() - t0:.0f} s; --jobs {args.jobs}; "
            f"load average before grading {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
            f"user {pwd.getpwuid(os.geteuid()).pw_name} (uid {os.geteuid()})"
        )
        runs = [_grade(paths[:n], Path(tmp) / f"out-{n}", args.jobs) for n in sizes]
    base = runs[0]
    print(
        f"{'submissions':>11} {'wall s':>8} {'subs/s':>7} {'sandbox s':>9} {'per sub s':>9} "
        f"{'warm/cold runs':>14} {'parent peak MB':>14} {'load after':>10}"
    )
    for r in runs:
        runs_text = f"{r['warm']}/{r['cold']}"
        print(
            f"{r['n']:>11} {r['wall']:>8.1f} {r['n'] / r['wall']:>7.2f} {r['sandbox']:>9.1f} "
            f"{r['sandbox'] / r['n']:>9.3f} {runs_text:>14} {r['rss']:>14.1f} "
            f"{r['load']:>10.2f}"
            + (f"   ({r['errors']} could not be graded)" if r["errors"] else "")
        )
        if r["unavailable"]:
            print(f"  warm workers: {r['unavailable']}")
    last = runs[-1]
    print(
        f"parent peak memory: {last['rss']:.1f} MB at {last['n']} submissions vs "
        f"{base['rss']:.1f} MB at {base['n']} ({last['rss'] / base['rss']:.2f}x for "
        f"{last['n'] / base['n']:.0f}x the submissions)"
    )
    rate = last["n"] / last["wall"]
    print(
        f"time per submission: {last['wall'] / last['n']:.3f} s at {last['n']} vs "
        f"{base['wall'] / base['n']:.3f} s at {base['n']} "
        f"({(last['wall'] / last['n']) / (base['wall'] / base['n']):.2f}x)"
    )
    print(
        f"projected for 1,000 students x {len(ASSIGNMENTS)} notebooks ({COURSE} submissions) at --jobs "
        f"{args.jobs}: {COURSE / rate / 60:.1f} min on this machine ({rate:.2f} submissions/s)"
    )
    print("mean seconds in the sandboxed child per submission, by assignment:")
    for a, s in sorted(last["child_seconds"].items()):
        print(f"  {a:<24} {s:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
