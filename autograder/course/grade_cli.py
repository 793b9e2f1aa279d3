"""`drills grade` and `drills check`: the sandboxed grading engine (the Grader) and the commands.

The class run around it (discovery, results cache, shards, gradebook) is class_run.py; how
submissions are found, engine/layout.py.

    drills grade SUBMISSION... --out DIR [--assignment ID] [--jobs N] [--secret-file F]
                 [--timeout S] [--memory MB] [--show-hidden] [--shard K/N] [--force]
                 [--canvas-roster EXPORT.csv]
    drills check NOTEBOOK [--assignment ID] [--student ID] [--json] [--timeout S] [--show-hidden]

The pipeline per submission (the parent never imports learner code):

    cache      a result already in OUT/.drills-cache for the same submission, student,
               course, secret and grader is reused as it is (results_cache)
    read       strict JSON + nbformat validation, assignment and student from the path
    cases      the student's own inputs (seeded by secret, assignment, case and student id)
               and the reference's outcomes on them (Grader.cases_for); the catalogued
               mistakes' outcomes only when a function fails
    program    source setup cells + the learner's solution cells (submission.build_program)
    run        one sandboxed child per submission computes the learner's outcomes
               (Grader._run(work, slot) -> work.execution); in a batch, a fresh fork of a
               warm worker per submission (worker)
    score      in the parent, with evaluate.score against the reference's outcomes and the
               catalogued mistakes: the same functions the in-kernel engine uses, so both
               engines give the same points
    store      the result goes into the cache at once (atomic): a run killed at any point
               loses at most the submissions in flight, and the same command resumes it
    report     at the end grades.csv, results.json(l), feedback pages, report.html and
               canvas.csv are assembled from the cache in gradebook order, one result in
               memory at a time (gradebook.assemble), then run.json

Reading, scoring and storing happen in the main thread, interleaved with at most
2 × jobs submissions in flight, so the parent's memory does not grow with the number
of submissions. The student id (from ``submitted/<student>/``) seeds the generated
cases as nbgrader's in-kernel engine does from ``autograded/<student>/``, so both
engines give each student the same inputs and the same points.
"""

from __future__ import annotations

import argparse
import functools
import json
import queue
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sized
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder import assignments
from autograder.cases import codec, seeds
from autograder.cases.compare import same_outcome
from autograder.cases.spec import FunctionSpec
from autograder.course import class_run, report, results_cache, shards
from autograder.course.report import SubmissionResult
from autograder.engine import sandbox, submission, worker
from autograder.notebooks import course_values, notebook
from autograder.scoring import evaluate, memo, served
from autograder.scoring.evaluate import FunctionResult

DEFAULT_TIMEOUT = 30.0
DEFAULT_MEMORY_MB = 2048


@dataclass
class Prepared:
    """Everything trusted about one assignment that is the same for every student."""

    id: str
    source_nb: Any
    solution_ids: set[str]
    names: list[str]
    points: dict[str, float]
    # Outlines of the FunctionSpecs (ids, kinds, weights, tolerances, notes; no generators):
    # enough to score without importing the case module (memo.assignment_outcomes).
    specs: dict[str, FunctionSpec]
    # The outcomes without a student id (a learner's own check): read once, not per submission.
    shared: memo.AssignmentOutcomes

    @property
    def max_score(self) -> float:
        return float(sum(self.points.values()))


@dataclass
class StudentCases:
    """One student's cases of one assignment: inputs, expected outcomes, mistakes' outcomes."""

    student: str | None
    inputs: dict[str, list[dict]]
    expected: dict[str, list[dict]]
    mutants: dict[str, Mapping[str, list[dict]]]
    # probe inputs (scoring.relations), each with the reference's outcome as "expected"
    # (memo.LazyProbes: computed for a function when it fails a check)
    probes: Mapping[str, list[dict]] = field(default_factory=dict)


@dataclass
class _Work:
    sub: submission.Submission
    program: submission.Program | None = None
    cases: StudentCases | None = None
    execution: sandbox.Execution | None = None
    crash: str | None = None  # the grader itself failed on this submission (never expected)
    fixed_apart: bool = False  # the fixed cases ran in children that held no generated input
    # the learner's results on each function's probes (with the reference's), by function:
    # run after every graded check, for the functions that failed one (scoring.relations)
    probe_results: dict[str, list[dict]] = field(default_factory=dict)


# CPython 3.11 keeps the recursion counter of AST construction in state that every thread
# shares, so two threads building AST objects at once can fail with this SystemError though
# neither did anything wrong (python/cpython#106905 shows the counter): a check server's
# warm-up running 04's reference (which parses code) beside a click that reads a notebook.
# The grader's own threads never parse at once (worker.preload_for); such a failure of a
# submission's reading or scoring is tried again rather than reported as the notebook's.
AST_RACE = "AST constructor recursion depth mismatch"
AST_RACE_TRIES = 3


def _again_on_ast_race(fn, *args):
    """``fn(*args)``, called again (up to AST_RACE_TRIES times in all) when it fails with the
    SystemError of two threads building AST objects at once."""
    for _ in range(AST_RACE_TRIES - 1):
        try:
            return fn(*args)
        except SystemError as e:
            if AST_RACE not in str(e):
                raise
    return fn(*args)


class Grader:
    """Grades submissions in sandboxed children; reusable across calls (caches references)."""

    def __init__(
        self,
        root: Path | None = None,
        secret: str | None = None,
        limits: sandbox.Limits | None = None,
        hidden: list[Path] | None = None,
        force_reduced: bool = False,
        per_student: bool = True,
        warm: bool = True,
    ) -> None:
        self.root = root or notebook.course_root()
        self.per_student = per_student  # seed generated cases with each submission's student id
        self.secret = seeds.course_secret(secret)
        if course_values.active(self.root) and self.secret != seeds.PUBLIC_DEFAULT_SECRET:
            raise course_values.CourseFormError(
                "this is the course form of reward-drills, which checks on the public draw "
                "only: a course secret is for the instructor's full form (unset DRILLS_SECRET)"
            )
        self.limits = limits or sandbox.Limits()
        self.isolation = sandbox.detect([self.root, *(hidden or [])], force_reduced=force_reduced)
        if self.secret != seeds.PUBLIC_DEFAULT_SECRET:
            why = sandbox.secret_exposure(self.isolation, list(hidden or [])) or (
                sandbox.answer_exposure(self.isolation, self.root)
            )
            if why:
                # why bubblewrap is not in use, when it was tried (an instructor in a container
                # needs that more than anything else here)
                tried = [w for w in self.isolation.warnings if "failed to start a sandbox" in w]
                raise sandbox.SecretExposed(
                    f"refusing to grade with the course secret: {why}"
                    + (f". ({tried[0]})" if tried else "")
                )
        self._prepared: dict[str, Prepared] = {}
        self._prepare_lock = threading.RLock()
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
                a: submission.solution_ids(notebook.source(a, self.root))
                for a in notebook.available_assignments(self.root)
            }
        return self._sources

    def prepare(self, assignment: str) -> Prepared:
        # one computation per assignment, also when a check server's warm-up and a check
        # ask at once (check_server.py): the second waits for the first's outcomes
        with self._prepare_lock:
            return self._prepare(assignment)

    def _prepare(self, assignment: str) -> Prepared:
        if assignment not in self._prepared:
            src = notebook.source(assignment, self.root)
            # From the outcome cache when it can be: no case module, numpy or torch to import.
            out = memo.assignment_outcomes(assignment, self.secret, None, self.root)
            self._prepared[assignment] = Prepared(
                assignment, src, submission.solution_ids(src), out.names, out.points, out.specs, out
            )
        return self._prepared[assignment]

    def cases_for(self, assignment: str, student: str | None) -> StudentCases:
        """The student's inputs and the reference's outcomes on them (trusted, in this process).

        Through the outcome cache (memo.assignment_outcomes): a function of the case
        module, the source notebook, the secret, the student and the libraries. The
        catalogued mistakes' outcomes are computed only when a function fails.
        """
        if student is None:
            out = self.prepare(assignment).shared
        else:
            out = memo.assignment_outcomes(assignment, self.secret, student, self.root)
        return StudentCases(student, out.inputs, out.expected, dict(out.mutants), out.probes)

    def _preloads(self, subs: Iterable[submission.Submission]) -> set[tuple[str, ...]]:
        """What the warm workers should import for these submissions' assignments (those
        known from the path or --assignment): numpy for 01-04, numpy and torch for 05-07.
        Read from the source notebook's setup cells alone, not from :meth:`prepare`: the
        zygote that imports them then starts at once, beside the reference outcomes (which
        for a torch notebook import torch in this process too), not after them."""
        known = {s.assignment for s in subs if s.assignment in self.sources()}
        return {
            worker.preload_for(
                [
                    (gid, src)
                    for _, gid, src in notebook.code_cells(notebook.source(a, self.root), {"setup"})
                ]
            )
            for a in sorted(known)
        }

    # -- per submission --

    def _read_contained(self, sub: submission.Submission) -> _Work:
        """:meth:`_read`, with any failure on this submission's data made its own error row."""
        try:
            return _again_on_ast_race(self._read, sub)
        except course_values.CourseFormError:
            raise  # the course form's values, not this notebook: `drills check` says why
        except Exception as e:  # noqa: BLE001 (one notebook must not stop the class run)
            sub.error = f"the grader could not read this notebook ({_describe(e)})"
            return _Work(sub)

    def _score_contained(self, w: _Work) -> SubmissionResult:
        """:meth:`_score`, then :func:`_clean_result`; a failure in either (never expected)
        becomes this submission's error row, scored 0, instead of stopping the run."""
        try:
            return _clean_result(_again_on_ast_race(self._score, w))
        except Exception as e:  # noqa: BLE001 (one notebook must not stop the class run)
            why = _describe(e)
        w.program, w.execution, w.crash = None, None, f"scoring failed: {why}"
        try:
            return _clean_result(self._score(w))
        except Exception as e:  # noqa: BLE001
            sub = w.sub
            return _clean_result(
                SubmissionResult(
                    sub.student,
                    sub.assignment or "unknown",
                    str(sub.path),
                    0.0,
                    timestamp=sub.timestamp,
                    error=f"the grader failed on this submission: {why}; {_describe(e)}",
                )
            )

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
        later = assignment or sub.path.stem
        if assignment not in self.sources() and course_values.active(self.root):
            if course_values.not_included(later):  # a notebook this course form does not hold
                sub.error = f"{later} cannot be checked in the course form: " + str(
                    course_values.not_included(later)
                )
                sub.assignment = later
                return w
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
        w.cases = self.cases_for(assignment, sub.student if self.per_student else None)
        return w

    def _run(self, w: _Work, slot: int) -> _Work:
        prog = w.program
        if prog is None:
            return w
        assert w.cases is not None
        try:
            cases = {
                n: served.restrict(w.cases.inputs[n], prog.served[n])
                if n in prog.served
                else w.cases.inputs[n]
                for n in prog.functions
                if n not in prog.missing
            }
            specs = self.prepare(w.sub.assignment).specs if w.sub.assignment else {}
            hidden = {n: [c.hidden for c in specs[n].cases] for n in cases if n in specs}
            # Under a course secret the generated inputs are what feedback must not carry;
            # a child holds every input it was sent from its first line on (learner code can
            # find them with gc), so the fixed cases run in children sent no generated input.
            w.fixed_apart = self.secret != seeds.PUBLIC_DEFAULT_SECRET and any(
                any(h) for h in hidden.values()
            )
            run = functools.partial(
                sandbox.execute,
                prog.cells,
                prog.setup,
                iso=self.isolation,
                slot=slot,
                runner=self.runner,
            )

            execute = _executor(run, hidden, self.limits, w.fixed_apart)

            # A function served a graded callee runs in children apart from the rest: its
            # cases' served tables hold the callee's reference outputs, on arguments that can
            # be the callee's own inputs (fixed ones, and generated ones: 04's task_reward and
            # extract_code draw from the same pools), which the callee's code must not find.
            ex = _execute_callers_apart(
                execute, cases, set(prog.functions), self.limits.output_chars
            )
            w.execution = _clean_execution(ex)
        except Exception as e:  # noqa: BLE001 (a grader failure still gives the submission its row)
            w.crash = _describe(e)
            return w
        try:
            w.probe_results = self._run_probes(w, run, specs)
        except Exception:  # noqa: BLE001 (a probe is never a check: without it, fewer lines)
            w.probe_results = {}
        return w

    def _feedback_asks_for_probes(
        self, w: _Work, name: str, fspec: FunctionSpec, outcomes: list[dict]
    ) -> bool:
        """Would the feedback of ``name`` read the probes (evaluate.explain asks for them only
        where no known mistake, shape or part of the result explains a failed check)? Scored
        once here without them; the score itself never depends on them."""
        asked: list[bool] = []

        def sentinel() -> list[dict]:
            asked.append(True)
            return []

        prog, cases = w.program, w.cases
        assert prog is not None and cases is not None
        evaluate.score(
            w.sub.assignment or "",
            fspec,
            self.prepare(w.sub.assignment).points[name] if w.sub.assignment else 1.0,
            cases.inputs[name],
            cases.expected[name],
            outcomes,
            None,
            cases.mutants[name],
            stub_note=prog.stub_notes.get(name, ""),
            broken_note=prog.broken_notes.get(name, ""),
            unbound_note=prog.unbound_notes.get(name, ""),
            probes=sentinel,
        )
        return bool(asked)

    def _run_probes(self, w: _Work, run, specs: dict[str, FunctionSpec]) -> dict[str, list[dict]]:
        """The learner's results on the probes of each function that failed a check and whose
        feedback would read them, in a program run of their own after every graded check (a
        probe cannot use up the time budget of a graded check, or leave it unrun). None after
        a run that ran out of time or hit a step timeout: probes would only add to a slow
        program's wait."""
        ex, cases = w.execution, w.cases
        if ex is None or cases is None or ex.budget_exhausted or not cases.probes:
            return {}
        todo: dict[str, list[dict]] = {}
        for name, fr in ex.functions.items():
            fspec = specs.get(name)
            if fspec is None or name not in cases.probes or fr.missing or fr.error is not None:
                continue
            outcomes = fr.outcomes
            if len(outcomes) != len(fspec.cases) or any(o is None for o in outcomes):
                continue
            if any(o.get("raised") in (sandbox.TIMEOUT, sandbox.NOT_RUN) for o in outcomes):
                continue
            exp = cases.expected[name]
            if all(
                same_outcome(exp[i], outcomes[i], c.rtol, c.atol) for i, c in enumerate(fspec.cases)
            ):
                continue
            if not self._feedback_asks_for_probes(w, name, fspec, outcomes):
                continue  # a known mistake, a shape or a part explains it: no run needed
            changed = cases.probes[name]  # computed here, for a function whose lines need it
            if changed:
                todo[name] = changed
        if not todo:
            return {}
        # served as the checks were (prog.served): a probe compares two of the same code's
        # results, never the learner's helper on a check with the reference's on its probe
        prog = w.program
        sent = {
            n: served.restrict([_probe_call(p) for p in v], prog.served[n])
            if prog is not None and n in prog.served
            else [_probe_call(p) for p in v]
            for n, v in todo.items()
        }
        hidden = {
            n: [specs[n].cases[p["probe"]["base"]].hidden for p in v] for n, v in todo.items()
        }
        # as the graded run: fixed and generated apart, a function served a graded callee
        # apart from that callee
        execute = _executor(run, hidden, self.limits, w.fixed_apart)
        graded = set(prog.functions) if prog is not None else set()
        pex = _clean_execution(
            _execute_callers_apart(execute, sent, graded, self.limits.output_chars)
        )
        out = {}
        for n, v in todo.items():
            fr = pex.functions.get(n)
            if fr is None or fr.missing or fr.error is not None or len(fr.outcomes) != len(v):
                continue
            out[n] = [dict(p, got=o) for p, o in zip(v, fr.outcomes) if o is not None]
        return out

    def _score(self, w: _Work) -> SubmissionResult:
        sub = w.sub
        a = sub.assignment or "unknown"
        # The maximum of a known assignment, even for a notebook that could not be read:
        # a row's max_score must not depend on which other notebooks were read before it.
        prep = self.prepare(a) if a in self.sources() and a in assignments.MODULES else None
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
        if ex is not None and ex.budget_exhausted:
            res.warnings.append(ex.budget_exhausted)
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
        # The child calls the functions in this order, each on its cases in order: from the
        # first generated case on, what the learner's code returns may carry its input.
        # Unless the fixed cases ran apart (none of them met a generated input), or the secret
        # is the public default (anyone can draw those inputs: there is nothing to keep).
        clean = w.fixed_apart or self.secret == seeds.PUBLIC_DEFAULT_SECRET
        after_generated, seen = {}, False
        for name in ex.functions if ex is not None else ():
            after_generated[name] = seen and not clean
            seen = seen or any(c.hidden for c in prep.specs[name].cases)
        for name in prep.names:
            pts = prep.points[name]
            fspec = prep.specs[name]
            err = None
            if res.error or prog is None:
                err = "not graded: " + (res.error or "no program")
            elif name in prog.missing:
                err = prog.missing[name]
            elif ex is None:
                err = "not graded"
            elif ex.setup_error is not None:
                err = "the setup cells failed in the sandbox: " + (ex.setup_error or "no message")
            elif name not in ex.functions:
                err = "not graded: the sandbox did not run it"
            elif ex.functions[name].missing:
                err = self._missing_reason(name, prog, ex)
            elif ex.functions[name].error is not None:
                err = ex.functions[name].error
            elif len(ex.functions[name].outcomes) != len(w.cases.inputs[name]) or any(
                o is None for o in ex.functions[name].outcomes
            ):
                err = "not graded: the sandbox returned an incomplete set of results"
            if err is not None:
                res.functions.append(FunctionResult(a, name, pts, 0.0, 0.0, False, error=err))
                continue
            fr = ex.functions[name]
            cases = w.cases
            assert cases is not None
            scored = evaluate.score(
                a,
                fspec,
                pts,
                cases.inputs[name],
                cases.expected[name],
                fr.outcomes,
                fr.seconds,
                cases.mutants[name],
                after_generated.get(name, True),
                clean,
                prog.stub_notes.get(name, ""),
                prog.broken_notes.get(name, ""),
                prog.unbound_notes.get(name, ""),
                w.probe_results.get(name),
            )
            # where a slip in a helper was charged (submission.build_program): once; a name the
            # program lacks is said once, as the cost line of the checks it made raise, or
            # here when none did
            said = any(d.id == "unbound-name" for d in scored.diagnoses)
            extra = (
                prog.charged_notes.get(name, ""),
                prog.served_notes.get(name, ""),
                "" if said else prog.unbound_notes.get(name, ""),
            )
            scored.note = " ".join(t for t in (scored.note, *extra) if t)
            res.functions.append(scored)
        if self.isolation.reduced:
            res.warnings.append(
                "isolation is reduced: bubblewrap is not available, so this code ran with resource limits only"
            )
        return res

    @staticmethod
    def _missing_reason(name: str, prog: submission.Program, ex: sandbox.Execution) -> str:
        if name in prog.uncompiled:
            return (
                f"{name} is not defined: its definition does not compile. {prog.uncompiled[name]}"
            )
        gid = prog.defined_in.get(name, name)

        def last(table: dict[int, str]) -> str | None:
            """What ``table`` says of the last copy of the function's cell, if anything."""
            said = [table[i] for i, (g, _) in enumerate(prog.cells) if g == gid and i in table]
            return said[-1] if said else None

        if (large := last(prog.too_large)) is not None:
            return f"{name} is not defined: your cell {gid!r} was not run: {large}"
        if (syntax := last(prog.syntax)) is not None:
            return f"{name} is not defined: its cell does not compile. {syntax}"
        if (error := last(ex.cell_errors)) is not None:
            return f"{name} is not defined: your cell {gid!r} failed ({error})"
        return f"{name} is not defined after your solution cells ran (was it renamed?)"

    def results(
        self, subs: Iterable[submission.Submission], jobs: int = 1, progress=None
    ) -> Iterator[tuple[submission.Submission, SubmissionResult]]:
        """Grade ``subs``, yielding ``(submission, result)`` as each one is scored.

        The main thread reads a submission (and computes its cases), hands it to a pool
        of ``jobs`` threads that each run one sandboxed child at a time (``_run``), and
        scores what comes back; at most ``2 * jobs`` submissions are in flight, so memory
        does not grow with the number of submissions. Results come in completion order.
        """
        jobs = max(1, jobs)
        slots: queue.Queue[int] = queue.Queue()
        for i in range(jobs):
            slots.put(i)
        busy = _BusyClock()

        def task(w: _Work) -> _Work:
            slot = slots.get()
            try:
                with busy:
                    return self._run(w, slot)
            finally:
                slots.put(slot)

        t_read = t_score = 0.0
        pending: set[Future] = set()

        def finished(done: set[Future]) -> Iterator[tuple[submission.Submission, SubmissionResult]]:
            nonlocal t_score
            for fut in done:
                w = fut.result()
                t0 = time.monotonic()
                res = self._score_contained(w)
                t_score += time.monotonic() - t0
                if progress is not None:
                    progress.update(1)
                yield w.sub, res

        # Warm workers (worker.py) for a batch: one zygote per slot forks each submission.
        count = len(subs) if isinstance(subs, Sized) else None
        warm = self.warm and (count is None or count > 1)
        self.runner = worker.WorkerPool(self.isolation, self.limits) if warm else None
        if self.runner is not None and count is not None:
            self.runner.prestart(jobs, self._preloads(subs))
        try:
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                for sub in subs:
                    t0 = time.monotonic()
                    w = self._read_contained(sub)
                    t_read += time.monotonic() - t0
                    pending.add(pool.submit(task, w))
                    while len(pending) >= 2 * jobs:
                        done, pending = wait(pending, return_when=FIRST_COMPLETED)
                        yield from finished(done)
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    yield from finished(done)
        finally:
            if self.runner is not None:
                self.runner.close()
                self.pool_stats = dict(self.runner.stats, unavailable=self.runner.unavailable)
            self.runner = None
        self.timing = {
            "read_and_prepare_s": t_read,
            "sandbox_s": busy.seconds,
            "score_s": t_score,
        }

    def grade(
        self, subs: list[submission.Submission], jobs: int = 1, progress: bool = False
    ) -> list[SubmissionResult]:
        """Grade ``subs`` in memory: results in the order of ``subs``, then nbgrader's rows
        for students who did not submit an assignment (a small class; see grade_course)."""
        bar = _progress(len(subs)) if progress else None
        by_sub = {id(s): r for s, r in self.results(subs, jobs, bar)}
        if bar:
            bar.close()
        return _with_missing_rows([by_sub[id(s)] for s in subs], self)

    def run_mode(self) -> str:
        """The isolation a run asks for: "reduced" (no bubblewrap), "cold" (a fresh child per
        submission: warm workers off, DRILLS_WARM=off, or impossible here) or "warm" (warm
        workers where they start). Part of the results cache's key: a result graded one way
        is not reused by a run asking for another."""
        if self.isolation.reduced:
            return "reduced"
        if not self.warm or worker.warm_possible(self.isolation) is not None:
            return "cold"
        return "warm"

    def meta(self, show_hidden: bool) -> dict[str, Any]:
        return {
            "engine": "drills grade",
            "isolation": {"mode": self.isolation.mode, "warnings": self.isolation.warnings},
            "secret": "public default"
            if self.secret == seeds.PUBLIC_DEFAULT_SECRET
            else "course secret",
            "limits": {
                "timeout_s": self.limits.timeout,
                "budget_s": self.limits.submission_budget,
                "memory_mb": self.limits.memory_mb,
                "processes": self.limits.nproc,
                "file_size_mb": self.limits.fsize_mb,
            },
            "show_hidden": show_hidden,
        }


def _probe_call(p: dict) -> dict:
    """What a child is sent of a probe: its inputs and served tables, never the reference's
    outcome on it or the words of its relation."""
    return {k: v for k, v in p.items() if k not in ("expected", "probe")}


def _executor(run, hidden: dict, limits: sandbox.Limits, apart: bool):
    """``run`` (sandbox.execute) on a part of the cases: the fixed ones and the generated ones
    (``hidden``, per function) in children apart when ``apart`` (_execute_apart)."""

    def execute(part: dict) -> sandbox.Execution:
        if apart:
            return _execute_apart(run, part, hidden, limits)
        return run(cases=part, limits=limits)

    return execute


def _execute_apart(run, cases: dict, hidden: dict, limits: sandbox.Limits) -> sandbox.Execution:
    """``run`` (sandbox.execute) on the fixed cases, then on the generated ones, merged into
    one Execution as if one run: what learner code returns on a fixed case, shown in
    feedback, then cannot carry a generated input (the first children never held one).

    Each run has the submission's time budget (a submission's program may so take twice
    ``--budget`` in all, still bounded): sharing one would leave the generated cases of every
    function to the time a misbehaving fixed case left over. A function is missing if either
    run misses it; cell errors (shown in feedback) come from the first run only.
    """
    parts = []
    for want_hidden in (False, True):
        idx = {
            n: [i for i, h in enumerate(hidden.get(n, [False] * len(v))) if h == want_hidden]
            for n, v in cases.items()
        }
        idx = {n: ix for n, ix in idx.items() if ix}
        sub = {n: [cases[n][i] for i in ix] for n, ix in idx.items()}
        parts.append((idx, run(cases=sub, limits=limits) if sub else None))
    (idx1, ex1), (idx2, ex2) = parts
    out = sandbox.Execution({})
    for n, v in cases.items():
        fr = sandbox.FunctionRun(n, [None] * len(v), [0.0] * len(v))
        for ix, ex in ((idx1.get(n), ex1), (idx2.get(n), ex2)):
            if not ix or ex is None:
                continue
            part = ex.functions[n]
            if part.missing:  # not defined after the cells ran (its lists are empty)
                fr.missing = True
                continue
            if part.error is not None:  # not run at all (the setup failed): its lists are empty
                fr.error = fr.error or part.error
                continue
            for k, i in enumerate(ix):
                fr.outcomes[i], fr.seconds[i] = part.outcomes[k], part.seconds[k]
            fr.error = fr.error or part.error
        if fr.missing:
            fr.outcomes, fr.seconds = [], []
        out.functions[n] = fr
    done = [ex for _, ex in parts if ex is not None]
    first = done[0]
    out.cell_errors = dict(first.cell_errors) if first is ex1 else {}
    out.setup_error = next((ex.setup_error for ex in done if ex.setup_error), None)
    out.runs = sum(ex.runs for ex in done)
    out.seconds = sum(ex.seconds for ex in done)
    out.stdout = "".join(ex.stdout for ex in done)[: limits.output_chars]
    out.stderr = "".join(ex.stderr for ex in done)[: limits.output_chars]
    out.notes = [note for ex in done for note in ex.notes]
    out.budget_exhausted = next((ex.budget_exhausted for ex in done if ex.budget_exhausted), None)
    return out


def _execute_callers_apart(
    execute, cases: dict, graded: set[str], output_chars: int
) -> sandbox.Execution:
    """``execute`` on the functions whose cases serve no graded callee, then on those that do
    (scoring.served), merged into one Execution as if one run. A child holds every case it
    was sent from its start, where learner code can read it: the callers' served tables
    (the reference callee's outputs on the arguments they pass) then never share a process
    with the callee's own cases, whose generated inputs may be among those arguments (04's
    task_reward and extract_code draw from the same pools of responses). Each part has the
    submission's time budget, as in _execute_apart; cell errors come from the first part."""
    callers = [
        n
        for n, inputs in cases.items()
        if any(set((i.get("serve") or {}).get("functions", {})) & graded for i in inputs)
    ]
    if not callers or len(callers) == len(cases):
        return execute(cases)
    first = execute({n: v for n, v in cases.items() if n not in callers})
    second = execute({n: v for n, v in cases.items() if n in callers})
    out = sandbox.Execution({})
    for n in cases:
        out.functions[n] = (second if n in callers else first).functions[n]
    out.cell_errors = dict(first.cell_errors)
    out.setup_error = first.setup_error or second.setup_error
    out.runs = first.runs + second.runs
    out.seconds = first.seconds + second.seconds
    out.stdout = (first.stdout + second.stdout)[:output_chars]
    out.stderr = (first.stderr + second.stderr)[:output_chars]
    out.notes = first.notes + second.notes
    out.budget_exhausted = first.budget_exhausted or second.budget_exhausted
    return out


def _clean_execution(ex: sandbox.Execution) -> sandbox.Execution:
    """The sandbox boundary: everything the child sent, made safe for every writer, once.

    The child's records were checked for form (records.validate_outcome); here their text
    loses lone surrogates and a value holding an integer too large to compare becomes an
    UnsupportedReturn (codec.clean_outcome), and so do the cell errors, notes and output.
    """
    for fr in ex.functions.values():
        fr.outcomes = [None if o is None else codec.clean_outcome(o) for o in fr.outcomes]
        fr.error = None if fr.error is None else codec.clean_text(fr.error)
    ex.cell_errors = {i: codec.clean_text(e) for i, e in ex.cell_errors.items()}
    ex.setup_error = None if ex.setup_error is None else codec.clean_text(ex.setup_error)
    ex.stdout, ex.stderr = codec.clean_text(ex.stdout), codec.clean_text(ex.stderr)
    ex.notes = [codec.clean_text(n) for n in ex.notes]
    return ex


def _with_missing_rows(results: list[SubmissionResult], grader: Grader) -> list[SubmissionResult]:
    """nbgrader export writes a row for every student × assignment: add those not submitted."""
    graded = {r.assignment: r.max_score for r in results if r.assignment in grader._prepared}
    missing = report.missing_rows((report.Row.of(r) for r in results), graded)
    return results + [
        SubmissionResult(
            m.student, m.assignment, "", m.max_score, submitted=False, error="no submission"
        )
        for m in missing
    ]


class _BusyClock:
    """Wall-clock seconds during which at least one sandboxed child was running."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._since = 0.0
        self.seconds = 0.0

    def __enter__(self) -> None:
        with self._lock:
            if self._active == 0:
                self._since = time.monotonic()
            self._active += 1

    def __exit__(self, *exc) -> None:
        with self._lock:
            self._active -= 1
            if self._active == 0:
                self.seconds += time.monotonic() - self._since


# Moved to class_run.py (the class run: discovery to gradebook); kept here under their old
# names for callers of this module.
_clean_result, _describe, _progress = class_run.clean_result, class_run.describe, class_run.progress
RunStats, grade_course, peak_rss_mb = (
    class_run.RunStats,
    class_run.grade_course,
    class_run.peak_rss_mb,
)


# -- commands ----------------------------------------------------------------------------------


def _add_budget_option(parser: argparse.ArgumentParser) -> None:
    """`drills grade` and `drills check` share the per-submission time budget."""
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="wall-clock seconds one submission's program may take in all, every call and "
        "restart together; then its remaining cases fail 'time budget exhausted' "
        f"(default: {sandbox.BUDGET_STEPS} x --timeout)",
    )


def _limits(args: argparse.Namespace) -> sandbox.Limits:
    return sandbox.Limits(
        timeout=float(args.timeout),
        memory_mb=int(getattr(args, "memory", DEFAULT_MEMORY_MB)),
        budget=getattr(args, "budget", None),
    )


def _grade_cmd(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if args.budget is not None and args.budget <= 0:
        print("drills grade: --budget must be > 0", file=sys.stderr)
        return 2
    if args.jobs < 1 or args.timeout <= 0 or args.memory < 256:
        print("drills grade: --jobs must be >= 1, --timeout > 0, --memory >= 256", file=sys.stderr)
        return 2
    try:
        shard = shards.parse(args.shard) if args.shard else (1, 1)
    except ValueError as e:
        print(f"drills grade: {e}", file=sys.stderr)
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
    roster = Path(args.canvas_roster) if args.canvas_roster else None
    if roster is not None and not roster.is_file():
        print(f"drills grade: --canvas-roster {roster} is not a file", file=sys.stderr)
        return 2
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, sandbox.end_on_sigterm)  # no sandbox folder left behind
    hidden = [out.resolve()] + ([Path(args.secret_file).resolve()] if args.secret_file else [])
    try:
        grader = Grader(secret=secret, limits=_limits(args), hidden=hidden)
    except sandbox.SecretExposed as e:
        print(f"drills grade: {e}", file=sys.stderr)
        return 2
    for w in grader.isolation.warnings:
        print(f"warning: {w}", file=sys.stderr)
    t0 = time.monotonic()
    from autograder.course.exports.canvas import RosterError

    try:
        stats = grade_course(
            args.submissions,
            out,
            grader,
            assignment=args.assignment,
            jobs=args.jobs,
            shard=shard,
            force=args.force,
            show_hidden=args.show_hidden,
            canvas_roster=roster,
            progress=sys.stderr.isatty(),
        )
    except (ValueError, results_cache.CacheBusy, RosterError) as e:
        print(f"drills grade: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        # the output folder cannot be made or written (permissions, a full disk): said, not a
        # traceback; every result already stored is kept, and a rerun resumes from it
        where = f" {e.filename}" if e.filename else ""
        print(
            f"drills grade: cannot write{where}: {e.strerror or e}; results stored so far are "
            "kept, and the same command resumes once the cause is fixed",
            file=sys.stderr,
        )
        return 2
    if grader.pool_stats.get("unavailable"):
        print(f"note: {grader.pool_stats['unavailable']}; cold children were used", file=sys.stderr)
    for line in stats.not_graded:
        print(f"not graded: {codec.clean_text(line)}", file=sys.stderr)
    for line in stats.summary:
        print(codec.clean_text(line), file=sys.stderr)
    shard_text = f" (shard {shard[0]}/{shard[1]})" if shard[1] > 1 else ""
    print(
        f"graded {stats.submissions} submissions{shard_text} in {time.monotonic() - t0:.1f} s "
        f"({stats.graded} graded now, {stats.from_cache} from the results cache"
        + (
            f", {stats.corrupt_cache_entries} unreadable cache entries regraded"
            if stats.corrupt_cache_entries
            else ""
        )
        + f"; {stats.could_not_grade} could not be graded"
        + f"; sandboxed runs {stats.timing.get('sandbox_s', 0.0):.1f} s); "
        f"wrote {out / 'grades.csv'} and {out / 'report.html'}"
    )
    return 0


def check_grader(
    timeout: float = DEFAULT_TIMEOUT, budget: float | None = None, student: str | None = None
) -> Grader:
    """The Grader of ``drills check`` (and of the check server, which keeps one for its life)."""
    return Grader(
        limits=sandbox.Limits(timeout=timeout, budget=budget), per_student=student is not None
    )


def check_notebook(
    path: Path,
    assignment: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    grader: Grader | None = None,
    student: str | None = None,
    budget: float | None = None,
) -> SubmissionResult:
    """Grade one notebook; ``result.error`` says why it could not be read, if so.

    Without ``student`` the generated cases are seeded without a student id (a learner's
    own check); with one, exactly as `drills grade` seeds that student's submission.
    """
    grader = grader or check_grader(timeout, budget, student)
    sid = seeds.student_id(student) if student is not None else submission.safe_id(path.stem)
    sub = submission.Submission(path=path, student=sid, assignment=assignment)
    w = grader._read_contained(sub)
    if sub.error:
        return _clean_result(
            SubmissionResult(
                sub.student,
                sub.assignment or "unknown",
                str(path),
                0.0,
                warnings=list(sub.warnings),
                error=sub.error,
            )
        )
    return grader._score_contained(grader._run(w, 0))


def _check_cmd(args: argparse.Namespace, grader: Grader | None = None) -> int:
    """``drills check``; ``grader``: the check server's (check_server.py), built by
    check_grader with this command's defaults, kept warm between checks."""
    path = Path(args.notebook)
    if args.assignment and args.assignment not in assignments.MODULES:
        print(f"drills check: unknown assignment {args.assignment!r}", file=sys.stderr)
        return 2
    if args.timeout <= 0 or (args.budget is not None and args.budget <= 0):
        print("drills check: --timeout and --budget must be > 0", file=sys.stderr)
        return 2
    if not path.is_file():
        print(f"drills check: {path} is not a file", file=sys.stderr)
        return 2
    # Feedback quotes the learner's own text: never let the terminal's encoding stop it.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        r = check_notebook(
            path,
            args.assignment,
            args.timeout,
            grader=grader,
            student=args.student,
            budget=args.budget,
        )
    except (sandbox.SecretExposed, course_values.CourseFormError) as e:
        # a course secret where learner code could read it; what the course form cannot do
        print(f"drills check: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 (a learner gets a sentence, never a traceback)
        print(
            f"drills check: the grader failed on {path.name} ({_describe(e)}); "
            "please report this with the notebook",
            file=sys.stderr,
        )
        return 2
    if not r.functions:
        for w in r.warnings:
            print(f"note: {w}", file=sys.stderr)
        print(f"drills check: {r.error}", file=sys.stderr)
        return 2
    warnings = list(r.warnings) + ([r.error] if r.error else [])
    if args.json:
        body = {
            "assignment": r.assignment,
            "score": r.score,
            "max_score": r.max_score,
            "functions": [f.to_json(args.show_hidden, for_learner=True) for f in r.functions],
            "warnings": warnings,
        }
        print(json.dumps(body, allow_nan=False))
        return 0
    for w in warnings:
        print(f"note: {w}")
    for f in r.functions:
        print(evaluate.feedback_text(f, show_hidden=args.show_hidden))
        print()
    print(f"Total: {r.score:g} / {r.max_score:g} points")
    return 0


def warm_outcomes(assignment: str, secret: str | None = None, root: Path | None = None) -> int:
    """Fill the outcome cache for a learner's check of ``assignment``: the expected outcomes and
    every catalogued mistake's (what a first check of a blank or wrong notebook computes).
    Returns how many functions' outcomes are now cached. Safe to run beside a check: entries
    are written atomically and either writer's entry is the same."""
    out = memo.assignment_outcomes(assignment, seeds.course_secret(secret), None, root)
    for name in out.names:
        len(out.mutants[name])  # loads the mistakes' outcomes, computing them if missing
    return len(out.names)


def check_args(path: str) -> argparse.Namespace:
    """The arguments of ``drills check PATH --json``, from this CLI's own parser (the check
    server's checks are that command, with its defaults)."""
    p = argparse.ArgumentParser(prog="drills")
    add_subcommands(p.add_subparsers(dest="command", required=True))
    return p.parse_args(["check", path, "--json"])


def _warm_cmd(args: argparse.Namespace) -> int:
    unknown = [a for a in args.assignments if a not in assignments.MODULES]
    if unknown:
        print(f"drills warm: unknown assignment(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    from autograder.scoring import cache

    if cache.directory() is None:
        print("drills warm: the outcome cache is turned off (DRILLS_CACHE)", file=sys.stderr)
        return 0
    if args.serve:
        if len(args.assignments) != 1:
            print("drills warm --serve: give exactly one assignment", file=sys.stderr)
            return 2
        from autograder.course import check_server

        defaults = check_args("NOTEBOOK")
        try:
            grader = check_grader(defaults.timeout, defaults.budget, defaults.student)
        except sandbox.SecretExposed as e:
            print(f"drills warm --serve: {e}", file=sys.stderr)
            return 2
        return check_server.serve(args.assignments[0], check_args, _check_cmd, grader)
    root = notebook.course_root()
    for a in args.assignments or notebook.available_assignments(root):
        t0 = time.perf_counter()
        n = warm_outcomes(a, root=root)
        if not args.quiet:
            print(f"{a}: outcomes of {n} functions cached in {time.perf_counter() - t0:.1f} s")
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
    _add_budget_option(g)
    g.add_argument(
        "--memory", type=int, default=DEFAULT_MEMORY_MB, help="address-space limit of a child, MB"
    )
    g.add_argument(
        "--show-hidden",
        action="store_true",
        help="show generated (hidden) cases' inputs and values in feedback (replayable!)",
    )
    g.add_argument(
        "--shard",
        metavar="K/N",
        help="grade only the K-th of N deterministic parts (join them with `drills merge`)",
    )
    g.add_argument(
        "--force", action="store_true", help="regrade everything, ignoring the results cache"
    )
    g.add_argument(
        "--canvas-roster",
        metavar="EXPORT.csv",
        help="a Canvas gradebook export: canvas.csv then uses its names, ids and columns",
    )
    g.set_defaults(func=_grade_cmd)

    c = sub.add_parser("check", help="check one notebook (the learner's grader: feedback printed)")
    c.add_argument("notebook")
    c.add_argument("--assignment", help="the assignment id (default: from the notebook)")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument(
        "--student",
        help="seed the generated cases with this student id, as `drills grade` does "
        "(default: none, a learner's own check)",
    )
    c.add_argument(
        "--show-hidden",
        action="store_true",
        help="show generated cases' inputs and values (they are hidden by default)",
    )
    c.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help="seconds one cell or one call may take",
    )
    _add_budget_option(c)
    c.set_defaults(func=_check_cmd)

    w = sub.add_parser(
        "warm",
        help="compute the outcomes a learner's first check needs (expected and known "
        "mistakes') into the outcome cache, so that check is as fast as the next",
    )
    w.add_argument("assignments", nargs="*", help="assignment ids (default: all)")
    w.add_argument("--quiet", action="store_true", help="print nothing")
    w.add_argument(
        "--serve",
        action="store_true",
        help="then answer `drills check --json` requests on stdin with a warm grader "
        "(the Check my work button's; see autograder/course/check_server.py)",
    )
    w.set_defaults(func=_warm_cmd)
