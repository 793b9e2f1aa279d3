"""A long fuzz run of `drills grade` and `drills check` (tests/test_fuzz_grade.py, at scale).

    python benchmarks/fuzz_grade.py [--parent 10000] [--child 500] [--class-size 200]
                                    [--jobs 2] [--seed 0] [--report FILE]

Two parts, with the strategies of tests/fuzz_submissions.py:

- parent side (``--parent`` submissions): damaged notebooks graded in this process with the
  sandbox replaced by ``fake_execute`` (hostile child records pushed through the sandbox's
  own checks): reading, validating, building the program, decoding, scoring, rendering,
  caching and the report, several times faster than real children. Each class is graded;
  every fifth is also rerun from its cache and resumed after half its cache entries are
  deleted (grades.csv byte-identical); the first notebook of each class also goes through
  `drills check` (its command function), with --json every other class.
- child side (``--child`` submissions): hostile learner code in real sandboxed children,
  `drills grade --jobs J` as a user runs it, graded and rerun.

A grader crash is any exception out of a run, a non-zero exit or a traceback, or a broken
invariant (a row missing or extra, an output that does not parse, a rerun or resumed run
whose grades.csv differs). Prints submissions, crashes, rows present and throughput per
part, and the most frequent error rows (what the damage was turned into).
"""

from __future__ import annotations

import argparse
import atexit
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
if "DRILLS_CACHE_DIR" not in os.environ:  # an outcome cache of its own, removed at the end
    os.environ["DRILLS_CACHE_DIR"] = tempfile.mkdtemp(prefix="drills-fuzz-cache-")
    atexit.register(shutil.rmtree, os.environ["DRILLS_CACHE_DIR"], True)
os.environ.pop("DRILLS_SECRET", None)

import fuzz_submissions as fz  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from test_fuzz_grade import check_in_process, grade_class_in_process, parent_grader  # noqa: E402

TALLIES: list = []
REPORT: dict = {"path": None, "t0": time.monotonic(), "seed": 0}


def figures(final: bool) -> str:
    """The figures so far (every part's tally and the totals)."""
    state = "" if final else " (still running)"
    lines = [
        f"fuzz_grade: seed {REPORT['seed']}, {time.monotonic() - REPORT['t0']:.0f} s in all{state}"
    ]
    for t in TALLIES:
        lines += t.lines()
    subs = sum(t.submissions for t in TALLIES)
    crashes = sum(t.crashes for t in TALLIES)
    rows = sum(t.rows for t in TALLIES)
    lines.append(f"total: {subs} submissions, {crashes} grader crashes, {rows} rows present")
    return "\n".join(lines)


def progress() -> None:
    """After each class: the figures so far into --report (a run stopped early keeps them)."""
    if REPORT["path"]:
        Path(REPORT["path"]).write_text(figures(False) + "\n", encoding="utf-8")


class Tally:
    def __init__(self, name: str) -> None:
        TALLIES.append(self)
        self.name = name
        self.submissions = self.classes = self.rows = self.crashes = self.graded_ok = 0
        self.checks = self.check_crashes = 0
        self.seconds = 0.0
        self.errors: collections.Counter[str] = collections.Counter()
        self.crash_samples: list[str] = []

    def crash(self, what: str) -> None:
        self.crashes += 1
        if len(self.crash_samples) < 5:
            self.crash_samples.append(what[-2000:])

    def errors_of(self, out: Path) -> None:
        for line in (out / "results.jsonl").read_text(encoding="utf-8").split("\n")[:-1]:
            item = json.loads(line)
            err = item.get("error")
            self.graded_ok += not err
            if err:
                # the kind of error, without the file name it starts with
                words = err.split(" ", 1)[1] if err.startswith("s0") else err
                self.errors[words[:60]] += 1

    def lines(self) -> list[str]:
        rate = self.submissions / self.seconds if self.seconds else 0.0
        out = [
            f"{self.name}: {self.submissions} submissions in {self.classes} classes, "
            f"{self.seconds:.0f} s ({rate:.1f} submissions/s)",
            f"  grader crashes: {self.crashes}; rows present: {self.rows} of {self.submissions} "
            f"({self.graded_ok} graded, the others error rows)",
        ]
        if self.checks:
            out.append(f"  drills check: {self.checks} notebooks, {self.check_crashes} crashes")
        for what in self.crash_samples:
            out.append("  crash: " + what.replace("\n", "\n    "))
        for text, n in self.errors.most_common(12):
            out.append(f"  {n:6d} × {text}")
        return out


def _batches(strategy, total: int, size: int, rng_seed: int, grade_batch) -> None:
    """Draw ``total`` submissions one example at a time (Hypothesis handles one submission
    per example far faster than a list of fifty) and grade them in classes of ``size``."""
    batch: list[bytes] = []
    drawn = [0]

    @seed(rng_seed)
    @settings(
        max_examples=total,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def one(raw):
        if drawn[0] >= total:
            return
        drawn[0] += 1
        batch.append(raw)
        if len(batch) >= size:
            grade_batch(list(batch))
            batch.clear()

    while drawn[0] < total:
        before = drawn[0]
        one()
        if drawn[0] == before:  # Hypothesis has nothing new to give
            break
        rng_seed += 1000
        one = seed(rng_seed)(one)
    if batch:
        grade_batch(list(batch))


def parent_part(total: int, size: int, rng_seed: int) -> Tally:
    tally = Tally("parent side (fake sandbox)")
    grader = parent_grader()

    def grade_batch(files: list[bytes]) -> None:
        tally.classes += 1
        tally.submissions += len(files)
        t0 = time.monotonic()
        try:
            # every 5th class is also rerun and resumed (byte-identical grades.csv)
            grade_class_in_process(files, grader, tally=tally, rerun=tally.classes % 5 == 1)
        except BaseException:  # noqa: BLE001 (counted, and the run goes on)
            tally.crash(traceback.format_exc())
        for as_json, raw in ((tally.classes % 2 == 0, files[0]),):
            with tempfile.TemporaryDirectory(prefix="drills-fuzz-") as tmp:
                path = Path(tmp) / "work.ipynb"
                path.write_bytes(raw)
                tally.checks += 1
                try:
                    rc, out, err = check_in_process(path, as_json)
                    assert rc in (0, 2), (rc, err)
                    if rc == 0 and as_json:
                        json.loads(out)
                except BaseException:  # noqa: BLE001
                    tally.check_crashes += 1
                    tally.crash("drills check: " + traceback.format_exc())
        tally.seconds += time.monotonic() - t0
        progress()
        print(
            f"  … {tally.submissions} submissions, {tally.crashes} crashes ({tally.seconds:.0f} s)",
            file=sys.stderr,
            flush=True,
        )

    _batches(fz.submission_bytes("parent"), total, size, rng_seed, grade_batch)
    return tally


def child_part(total: int, size: int, jobs: int, rng_seed: int) -> Tally:
    tally = Tally("child side (real sandboxed children)")
    env = dict(os.environ)

    def grade_batch(files: list[bytes]) -> None:
        tally.classes += 1
        tally.submissions += len(files)
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="drills-fuzz-") as tmp:
            names = fz.write_class(Path(tmp) / "class", files)
            out = Path(tmp) / "out"
            cmd = fz.grade_command(Path(tmp) / "class", out, jobs=jobs)
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
                assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
                rows = fz.check_outputs(out, names)
                tally.rows += len(rows)
                tally.errors_of(out)
                first = (out / "grades.csv").read_bytes()
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
                assert p.returncode == 0, p.stderr[-2000:]
                assert (out / "grades.csv").read_bytes() == first, "the rerun changed grades.csv"
            except BaseException:  # noqa: BLE001 (counted, and the run goes on)
                tally.crash(traceback.format_exc())
        tally.seconds += time.monotonic() - t0
        progress()
        print(
            f"  … {tally.submissions} child-side submissions, {tally.crashes} crashes "
            f"({tally.seconds:.0f} s)",
            file=sys.stderr,
            flush=True,
        )

    if total:
        _batches(fz.submission_bytes("child"), total, size, rng_seed + 1, grade_batch)
    return tally


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parent", type=int, default=10000, help="parent-side submissions")
    ap.add_argument("--child", type=int, default=500, help="submissions run in real children")
    ap.add_argument("--class-size", type=int, default=200)
    ap.add_argument("--child-class-size", type=int, default=25)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--report", help="also write the figures to this file")
    args = ap.parse_args()
    REPORT.update(path=args.report, seed=args.seed, t0=time.monotonic())
    if args.parent:
        parent_part(args.parent, args.class_size, args.seed)
    if args.child:
        child_part(args.child, args.child_class_size, args.jobs, args.seed)
    text = figures(True)
    print(text)
    if args.report:
        Path(args.report).write_text(text + "\n", encoding="utf-8")
    crashes = sum(t.crashes for t in TALLIES)
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
