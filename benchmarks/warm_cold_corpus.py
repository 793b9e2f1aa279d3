"""The whole misbehaving-submission corpus graded by cold children and by one warm worker.

    python benchmarks/warm_cold_corpus.py [--names a,b,c]

Grades every readable fixture of tests/fixtures/corpus/ twice, as the suite's warm-worker
test once did: by cold children two at a time, then by one warm worker in turn (sorted
names, so the witness comes after every polluter), under the course secret the corpus's
expected.json was written for. Prints per fixture the seconds each mode took, whether its
scores are the corpus's in each mode, and whether the two modes gave the same verdicts,
outcomes (error messages included), warnings and notes; exits 1 on any disagreement.

tests/test_warm_worker.py runs the same comparison (this module's functions) on a slice
with one fixture of every kind (WARM_COLD_SLICE there); this script is the full sweep,
about 4 minutes on a 2-core machine, most of it the time-budget fixtures (25 s each, per
mode) and the infinite loops (5 s each, per mode).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.course import grade_cli  # noqa: E402
from autograder.engine import sandbox, submission  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "corpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())["submissions"]
A = "01_exact_kl"
# The course secret tests/test_grade_corpus.py grades with: expected.json's scores hold under it
# (reads_generated_inputs_via_gc scores differently under the public default, where fixed and
# generated cases share one child because nothing generated is secret).
CORPUS_SECRET = "corpus-secret-3f9a1c77e2b84d05"
# The fixtures that cannot be read never reach a child.
UNREADABLE = {"broken_json", "huge_int_in_json"}


def readable_fixtures() -> list[str]:
    return sorted(p.stem for p in CORPUS.glob("*.ipynb") if p.stem not in UNREADABLE)


def grade(names: list[str], warm: bool, jobs: int, limits: sandbox.Limits):
    """{student: result} and the pool's stats of one grading run over ``names``."""
    g = grade_cli.Grader(limits=limits, warm=warm, secret=CORPUS_SECRET)
    subs = [submission.Submission(CORPUS / f"{n}.ipynb", n, A) for n in names]
    results = g.grade(subs, jobs=jobs)
    return {r.student: r for r in results}, g.pool_stats


def verdicts(results: dict) -> dict:
    """What a learner is told, per submission: everything but the seconds it took."""
    return {
        s: (
            r.score,
            r.error,
            r.warnings,
            r.notes,
            [
                (
                    f.function,
                    f.score,
                    f.mistake,
                    f.error,
                    [(c.id, c.passed, c.got) for c in f.cases],
                )
                for f in r.functions
            ],
        )
        for s, r in results.items()
    }


def wrong_scores(results: dict) -> dict:
    """{student: scores} of the submissions whose scores are not expected.json's."""
    scores = {n: {f.function: f.score for f in r.functions} for n, r in results.items()}
    return {n: got for n, got in scores.items() if got != EXPECTED[n]["scores"]}


def why_wrong(results: dict) -> str:
    """For a failure message: what each submission with unexpected scores was told and why
    (its error, warnings and notes, each function's error and first case's outcome)."""
    lines = []
    for n, got in wrong_scores(results).items():
        r = results[n]
        lines.append(f"{n}: got {got}, expected {EXPECTED[n]['scores']}")
        lines.append(f"  error {r.error!r}; warnings {r.warnings!r}; notes {r.notes!r}")
        for f in r.functions:
            first = f.cases[0].got if f.cases else None
            lines.append(
                f"  {f.function}: {f.score} error {f.error!r}; first case {str(first)[:200]}"
            )
    return "\n".join(lines)


def grade_warm_and_cold(names: list[str], limits: sandbox.Limits) -> dict:
    """Both runs, timed: cold children two at a time, then one warm worker in turn."""
    t0 = time.monotonic()
    cold, _ = grade(names, warm=False, jobs=2, limits=limits)
    t1 = time.monotonic()
    warm, stats = grade(names, warm=True, jobs=1, limits=limits)
    t2 = time.monotonic()
    a, b = verdicts(cold), verdicts(warm)
    return {
        "cold": cold,
        "warm": warm,
        "stats": stats,
        "seconds": {"cold": t1 - t0, "warm": t2 - t1},
        "disagree": sorted(s for s in a if a[s] != b[s]),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--names", help="comma-separated fixture names (default: every readable one)")
    args = ap.parse_args()
    names = args.names.split(",") if args.names else readable_fixtures()
    limits = sandbox.Limits(timeout=5, memory_mb=1024)
    run = grade_warm_and_cold(names, limits)
    cold, warm = run["cold"], run["warm"]
    bad = {"cold": wrong_scores(cold), "warm": wrong_scores(warm)}
    print(f"{'fixture':34} {'cold s':>7} {'warm s':>7}  scores  warm = cold")
    for n in names:
        ok = "ok" if n not in bad["cold"] and n not in bad["warm"] else "WRONG"
        same = "no" if n in run["disagree"] else "yes"
        print(f"{n:34} {cold[n].seconds:7.2f} {warm[n].seconds:7.2f}  {ok:6}  {same}")
    s = run["seconds"]
    print(
        f"\n{len(names)} fixtures: cold (2 at a time) {s['cold']:.1f} s, warm (one worker) "
        f"{s['warm']:.1f} s; pool {run['stats']}"
    )
    failed = bad["cold"] or bad["warm"] or run["disagree"] or run["stats"]["cold_jobs"]
    if failed:
        print(f"wrong scores {bad}; warm and cold disagree on {run['disagree']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
