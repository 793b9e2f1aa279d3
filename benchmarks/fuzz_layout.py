"""A long fuzz run of discovery (tests/test_fuzz_layout.py, at scale).

    python benchmarks/fuzz_layout.py [--students 5000] [--grade-every 25] [--seed 0]

Generates class folders (tests/fuzz_layout.py: deep chains, wide folders, links, FIFOs, odd
and colliding names, ids shaped like error rows) until ``--students`` students have been
written, discovers each class under its drawn command-line form and checks discovery's
promises; every ``--grade-every``-th class is also graded with the sandbox faked (one row per
discovered submission, every output parses). Prints students, classes, failures, the rows by
kind and the throughput; exits 1 on any failure, after printing the first few.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
if "DRILLS_CACHE_DIR" not in os.environ:  # an outcome cache of its own
    os.environ["DRILLS_CACHE_DIR"] = tempfile.mkdtemp(prefix="drills-fuzz-cache-")

import fuzz_layout as fl  # noqa: E402
import fuzz_submissions as fz  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from autograder.course import grade_cli  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=5000)
    ap.add_argument("--grade-every", type=int, default=25)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    tally = collections.Counter()
    failures: list[str] = []
    grader = grade_cli.Grader(warm=False, per_student=False)
    t0 = time.monotonic()

    @seed(args.seed)
    @settings(
        max_examples=10 * args.students,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(fl.class_tree())
    def one(tree):
        if tally["students"] >= args.students:
            return
        students, form = tree
        tally["classes"] += 1
        tally["students"] += len(students)
        tally[f"form {form}"] += 1
        with tempfile.TemporaryDirectory(prefix="drills-fuzz-layout-") as tmp:
            course = Path(tmp) / "course"
            try:
                fl.write_tree(course, students)
                subs = fl.check_discovery(course, students, form)
                tally["rows"] += len(subs)
                tally["error rows"] += sum(1 for s in subs if s.error)
                if subs and tally["classes"] % args.grade_every == 0:
                    out = Path(tmp) / "out"
                    with fl.small_budget(), fz.fake_sandbox():
                        grade_cli.grade_course(fl.command_line(course, students, form), out, grader)
                    rows = fl.results_rows(out)
                    assert len(rows) == len(set(rows)) == len(subs), (rows, subs)
                    fl.check_huge_graded(out, students, form)
                    tally["classes graded"] += 1
            except Exception:  # noqa: BLE001 (a failure is counted and printed, the run goes on)
                failures.append(f"{students!r} {form}\n{traceback.format_exc(limit=4)}")

    one()
    dt = time.monotonic() - t0
    print(f"fuzz_layout: seed {args.seed}, {dt:.0f} s")
    for k, v in sorted(tally.items()):
        print(f"  {k:24} {v}")
    print(f"  {'failures':24} {len(failures)}")
    print(f"  {'students per second':24} {tally['students'] / dt:.0f}")
    for f in failures[:5]:
        print("---\n" + f)
    shutil.rmtree(os.environ["DRILLS_CACHE_DIR"], ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
