"""`drills grade` and `drills check`: the sandboxed grading engine.

    drills grade SUBMISSION... --out DIR [--assignment ID] [--jobs N] [--secret-file F]
                 [--timeout S] [--memory MB] [--show-hidden]
    drills check NOTEBOOK [--assignment ID] [--json] [--timeout S]

The pipeline per submission (the parent never imports learner code):

    read       strict JSON + nbformat validation, assignment and student from the path
    program    source setup cells + the learner's solution cells (submission.build_program)
    run        one sandboxed child per submission computes the learner's outcomes (sandbox;
               for a batch, a fresh fork of a warm worker per submission: worker)
    score      in the parent, with evaluate.score against the reference's outcomes and the
               catalogued mistakes: the same functions the in-kernel engine uses, so both
               engines give the same points
    report     grades.csv, results.json, feedback pages (report)

Generated inputs come from the course secret (``--secret-file``, ``$DRILLS_SECRET``,
or the public default); the student id is not mixed into the seeds, so the
scores agree with nbgrader's in-kernel engine.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder import (
    assignments,
    evaluate,
    notebook,
    report,
    sandbox,
    seeds,
    submission,
    worker,
)
from autograder.evaluate import FunctionResult
from autograder.report import SubmissionResult
from autograder.spec import FunctionSpec

DEFAULT_TIMEOUT = 30.0
DEFAULT_MEMORY_MB = 2048


@dataclass
class Prepared:
    """Everything trusted about one assignment: cases, expected outcomes, mutants' outcomes."""

    id: str
    source_nb: Any
    solution_ids: set[str]
    names: list[str]
    points: dict[str, float]
    inputs: dict[str, list[dict]]
    expected: dict[str, list[dict]]
    # Known mistakes' outcomes are computed on first use (evaluate.LazyMistakes); specs are
    # outlines, enough to score (evaluate.assignment_outcomes).
    mutants: Mapping[str, Mapping[str, list[dict]]]
    specs: dict[str, FunctionSpec] | None = None

    @property
    def max_score(self) -> float:
        return float(sum(self.points.values()))


@dataclass
class _Work:
    sub: submission.Submission
    program: submission.Program | None = None
    execution: sandbox.Execution | None = None
    crash: str | None = None  # the grader itself failed on this submission (never expected)


class Grader:
    """Grades submissions in sandboxed children; reusable across calls (caches references)."""

    def __init__(
        self,
        root: Path | None = None,
        secret: str | None = None,
        limits: sandbox.Limits | None = None,
        hidden: list[Path] | None = None,
        force_reduced: bool = False,
        warm: bool = True,
    ) -> None:
        self.root = root or notebook.course_root()
        self.secret = seeds.course_secret(secret)
        self.limits = limits or sandbox.Limits()
        self.isolation = sandbox.detect([self.root, *(hidden or [])], force_reduced=force_reduced)
        self._prepared: dict[str, Prepared] = {}
        self._sources: dict[str, set[str]] | None = None
        self.timing: dict[str, float] = {}
        self.warm = warm  # batches run in warm workers where they are safe (worker.py)
        self.runner: worker.WorkerPool | None = None  # set while grade() runs
        self.pool_stats: dict[str, Any] = {}

    # -- trusted preparation --

    def sources(self) -> dict[str, set[str]]:
        """Solution grade_ids of every available source notebook."""
        if self._sources is None:
            self._sources = {
                a: submission.solution_ids(notebook.read(notebook.source_path(a, self.root)))
                for a in notebook.available_assignments(self.root)
            }
        return self._sources

    def prepare(self, assignment: str) -> Prepared:
        if assignment not in self._prepared:
            src = notebook.read(notebook.source_path(assignment, self.root))
            # From the outcome cache when it can be: no case module, numpy or torch to import.
            out = evaluate.assignment_outcomes(assignment, self.secret, None, self.root)
            self._prepared[assignment] = Prepared(
                assignment,
                src,
                submission.solution_ids(src),
                out.names,
                out.points,
                out.inputs,
                out.expected,
                out.mutants,
                out.specs,
            )
        return self._prepared[assignment]

    # -- per submission --

    def _read(self, sub: submission.Submission) -> _Work:
        w = _Work(sub)
        if sub.error:
            return w
        try:
            nb = submission.load_notebook(sub.path)
        except submission.SubmissionError as e:
            sub.error = str(e)
            return w
        assignment = submission.identify(sub, nb, self.sources())
        if assignment is None:
            sub.error = "cannot tell which assignment this notebook is (use --assignment)"
            return w
        if assignment not in self.sources():
            sub.error = f"unknown assignment {assignment!r}"
            sub.assignment = assignment
            return w
        sub.assignment = assignment
        prep = self.prepare(assignment)
        w.program = submission.build_program(assignment, prep.source_nb, nb, prep.names)
        return w

    def _run(self, w: _Work, slot: int) -> _Work:
        prog = w.program
        if prog is None:
            return w
        prep = self._prepared[prog.assignment]
        cases = {n: prep.inputs[n] for n in prep.names if n not in prog.missing}
        try:
            w.execution = sandbox.execute(
                prog.cells, prog.setup, cases, self.isolation, self.limits, slot, runner=self.runner
            )
        except Exception as e:  # noqa: BLE001 (a grader failure still gives the submission its row)
            w.crash = f"{type(e).__name__}: {e}"
        return w

    def _score(self, w: _Work) -> SubmissionResult:
        sub = w.sub
        a = sub.assignment or "unknown"
        prep = self._prepared.get(a)
        res = SubmissionResult(
            student=sub.student,
            assignment=a,
            path=str(sub.path),
            max_score=prep.max_score if prep else 0.0,
            timestamp=sub.timestamp,
            warnings=list(sub.warnings),
            error=sub.error,
        )
        if prep is None:
            return res
        prog, ex = w.program, w.execution
        if prog is not None:
            res.warnings += prog.warnings
        if ex is not None:
            res.runs, res.seconds, res.stdout, res.stderr, res.notes = (
                ex.runs,
                ex.seconds,
                ex.stdout,
                ex.stderr,
                ex.notes,
            )
        if w.crash:
            res.error = f"the grader failed on this submission: {w.crash}"
        for name in prep.names:
            pts = prep.points[name]
            fspec = prep.specs[name] if prep.specs else assignments.get(a).function(name)
            err = None
            if res.error or prog is None:
                err = "not graded: " + (res.error or "no program")
            elif name in prog.missing:
                err = prog.missing[name]
            elif ex is None:
                err = "not graded"
            elif ex.setup_error:
                err = "the setup cells failed in the sandbox: " + ex.setup_error
            elif ex.functions[name].missing:
                err = self._missing_reason(name, prog, ex)
            if err is not None:
                res.functions.append(FunctionResult(a, name, pts, 0.0, 0.0, False, error=err))
                continue
            fr = ex.functions[name]
            res.functions.append(
                evaluate.score(
                    a,
                    fspec,
                    pts,
                    prep.inputs[name],
                    prep.expected[name],
                    fr.outcomes,
                    fr.seconds,
                    prep.mutants[name],
                )
            )
        if self.isolation.reduced:
            res.warnings.append(
                "isolation is reduced: bubblewrap is not available, so this code ran with resource limits only"
            )
        return res

    @staticmethod
    def _missing_reason(name: str, prog: submission.Program, ex: sandbox.Execution) -> str:
        gid = prog.defined_in.get(name, name)
        errors = [
            ex.cell_errors[i]
            for i, (g, _) in enumerate(prog.cells)
            if g == gid and i in ex.cell_errors
        ]
        if errors:
            return f"{name} is not defined: your cell {gid!r} failed ({errors[-1]})"
        return f"{name} is not defined after your solution cells ran (was it renamed?)"

    def grade(
        self, subs: list[submission.Submission], jobs: int = 1, progress: bool = False
    ) -> list[SubmissionResult]:
        t0 = time.monotonic()
        works = [self._read(s) for s in subs]
        t1 = time.monotonic()
        slots: queue.Queue[int] = queue.Queue()
        for i in range(max(1, jobs)):
            slots.put(i)

        def task(w: _Work) -> _Work:
            slot = slots.get()
            try:
                return self._run(w, slot)
            finally:
                slots.put(slot)

        bar = _progress(len(works)) if progress else None
        warm = self.warm and sum(w.program is not None for w in works) > 1
        self.runner = worker.WorkerPool(self.isolation, self.limits) if warm else None
        if self.runner is not None:
            needed = {worker.preload_for(w.program.setup) for w in works if w.program is not None}
            self.runner.prestart(max(1, jobs), needed)
        try:
            with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
                futures = [pool.submit(task, w) for w in works]
                for _ in as_completed(futures):
                    if bar:
                        bar.update(1)
        finally:
            if self.runner is not None:
                self.runner.close()
                self.pool_stats = dict(self.runner.stats, unavailable=self.runner.unavailable)
            self.runner = None
        if bar:
            bar.close()
        t2 = time.monotonic()
        results = [self._score(w) for w in works]
        self.timing = {
            "read_and_prepare_s": t1 - t0,
            "sandbox_s": t2 - t1,
            "score_s": time.monotonic() - t2,
        }
        return _with_missing_rows(results, self)

    def meta(self, show_hidden: bool) -> dict[str, Any]:
        return {
            "engine": "drills grade",
            "isolation": {"mode": self.isolation.mode, "warnings": self.isolation.warnings},
            "secret": "public default"
            if self.secret == seeds.PUBLIC_DEFAULT_SECRET
            else "course secret",
            "limits": {
                "timeout_s": self.limits.timeout,
                "memory_mb": self.limits.memory_mb,
                "processes": self.limits.nproc,
                "file_size_mb": self.limits.fsize_mb,
            },
            "show_hidden": show_hidden,
        }


def _with_missing_rows(results: list[SubmissionResult], grader: Grader) -> list[SubmissionResult]:
    """nbgrader export writes a row for every student × assignment: add those not submitted."""
    graded = sorted({r.assignment for r in results if r.assignment in grader._prepared})
    students = sorted({r.student for r in results})
    have = {(r.student, r.assignment) for r in results}
    out = list(results)
    for a in graded:
        for s in students:
            if (s, a) not in have:
                out.append(
                    SubmissionResult(
                        s,
                        a,
                        "",
                        grader._prepared[a].max_score,
                        submitted=False,
                        error="no submission",
                    )
                )
    return out


def _progress(total: int):
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=total, unit="notebook", desc="grading", file=sys.stderr)


# -- commands ----------------------------------------------------------------------------------


def _limits(args: argparse.Namespace) -> sandbox.Limits:
    return sandbox.Limits(
        timeout=float(args.timeout), memory_mb=int(getattr(args, "memory", DEFAULT_MEMORY_MB))
    )


def _grade_cmd(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if args.jobs < 1 or args.timeout <= 0 or args.memory < 256:
        print("drills grade: --jobs must be >= 1, --timeout > 0, --memory >= 256", file=sys.stderr)
        return 2
    secret = None
    if args.secret_file:
        try:
            secret = seeds.course_secret(secret_file=args.secret_file)
        except (OSError, ValueError) as e:
            print(f"drills grade: cannot read the secret file: {e}", file=sys.stderr)
            return 2
    if args.assignment and args.assignment not in assignments.MODULES:
        print(f"drills grade: unknown assignment {args.assignment!r}", file=sys.stderr)
        return 2
    hidden = [out.resolve()] + ([Path(args.secret_file).resolve()] if args.secret_file else [])
    grader = Grader(secret=secret, limits=_limits(args), hidden=hidden)
    subs = submission.discover(args.submissions, args.assignment)
    if not subs:
        print("drills grade: no notebooks found in " + " ".join(args.submissions), file=sys.stderr)
        return 2
    for w in grader.isolation.warnings:
        print(f"warning: {w}", file=sys.stderr)
    t0 = time.monotonic()
    results = grader.grade(subs, jobs=args.jobs, progress=sys.stderr.isatty())
    report.write_outputs(out, results, grader.meta(args.show_hidden), args.show_hidden)
    graded = [r for r in results if r.submitted]
    errors = sum(1 for r in graded if r.error)
    if grader.pool_stats.get("unavailable"):
        print(f"note: {grader.pool_stats['unavailable']}; cold children were used", file=sys.stderr)
    print(
        f"graded {len(graded)} submissions in {time.monotonic() - t0:.1f} s "
        f"(sandboxed runs {grader.timing.get('sandbox_s', 0.0):.1f} s; {errors} could not be graded); "
        f"wrote {out / 'grades.csv'}"
    )

    return 0


def check_notebook(
    path: Path,
    assignment: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    grader: Grader | None = None,
) -> SubmissionResult:
    """Grade one notebook; ``result.error`` says why it could not be read, if so."""
    grader = grader or Grader(limits=sandbox.Limits(timeout=timeout))
    sub = submission.Submission(
        path=path, student=submission.safe_id(path.stem), assignment=assignment
    )
    w = grader._read(sub)
    if sub.error:
        return SubmissionResult(
            sub.student, sub.assignment or "unknown", str(path), 0.0, error=sub.error
        )
    return grader._score(grader._run(w, 0))


def _check_cmd(args: argparse.Namespace) -> int:
    path = Path(args.notebook)
    if args.assignment and args.assignment not in assignments.MODULES:
        print(f"drills check: unknown assignment {args.assignment!r}", file=sys.stderr)
        return 2
    if args.timeout <= 0:
        print("drills check: --timeout must be > 0", file=sys.stderr)
        return 2
    if not path.is_file():
        print(f"drills check: {path} is not a file", file=sys.stderr)
        return 2
    r = check_notebook(path, args.assignment, args.timeout)
    if not r.functions:
        print(f"drills check: {r.error}", file=sys.stderr)
        return 2
    warnings = list(r.warnings) + ([r.error] if r.error else [])
    if args.json:
        body = {
            "assignment": r.assignment,
            "score": r.score,
            "max_score": r.max_score,
            "functions": [f.to_json() for f in r.functions],
            "warnings": warnings,
        }
        print(json.dumps(body, allow_nan=False))
        return 0
    for w in warnings:
        print(f"note: {w}")
    for f in r.functions:
        print(evaluate.feedback_text(f))
        print()
    print(f"Total: {r.score:g} / {r.max_score:g} points")
    return 0


def add_subcommands(sub) -> None:
    g = sub.add_parser(
        "grade", help="grade submissions in a sandbox (grades.csv, results.json, feedback)"
    )
    g.add_argument(
        "submissions",
        nargs="+",
        help="notebooks, or folders laid out as submitted/<student>/<assignment>/",
    )
    g.add_argument("--out", required=True, help="folder for grades.csv, results.json and feedback/")
    g.add_argument("--assignment", help="grade every notebook as this assignment")
    g.add_argument("--jobs", type=int, default=1, help="children run at once (default 1)")
    g.add_argument(
        "--secret-file",
        help="file holding the course secret (default: $DRILLS_SECRET or the public default)",
    )
    g.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help="seconds one cell or one call may take",
    )
    g.add_argument(
        "--memory", type=int, default=DEFAULT_MEMORY_MB, help="address-space limit of a child, MB"
    )
    g.add_argument(
        "--show-hidden", action="store_true", help="show generated (hidden) inputs in feedback"
    )
    g.set_defaults(func=_grade_cmd)

    c = sub.add_parser("check", help="check one notebook (the learner's grader: feedback printed)")
    c.add_argument("notebook")
    c.add_argument("--assignment", help="the assignment id (default: from the notebook)")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help="seconds one cell or one call may take",
    )
    c.set_defaults(func=_check_cmd)
