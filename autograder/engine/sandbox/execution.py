"""A whole program, in as many children as it takes (:func:`execute`), and its result
(:class:`Execution`): when a child dies, hangs or writes something invalid in the middle of a
function, that case fails with the reason, the function's remaining cases are not run, and a
fresh child continues with the next function (or skips a cell that killed the program while
loading). Every record is read in the only order the harness writes them
(:class:`_Interpreter`) and validated strictly (records.py).
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass, field, replace

from autograder.engine.records import (
    CRASH,
    INVALID,
    NOT_RUN,
    TIMEOUT,
    ProtocolError,
    _expect,
    parse_line,
    validate_outcome,
)
from autograder.engine.sandbox import child
from autograder.engine.sandbox.child import ChildRun
from autograder.engine.sandbox.common import Isolation
from autograder.engine.sandbox.resources import BUDGET_EXHAUSTED, Limits


@dataclass
class FunctionRun:
    name: str
    outcomes: list[dict | None]
    seconds: list[float]
    missing: bool = False  # not defined after the cells ran (renamed, deleted, broken cell)
    error: str | None = None  # could not be run at all


@dataclass
class Execution:
    functions: dict[str, FunctionRun]
    cell_errors: dict[int, str] = field(default_factory=dict)  # index in program.cells -> error
    setup_error: str | None = None
    runs: int = 0
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""
    notes: list[str] = field(
        default_factory=list
    )  # what went wrong with children (for results.json)
    budget_exhausted: str | None = None  # for the learner: the time budget stopped the program


def _why(run: ChildRun, limits: Limits) -> tuple[str, str]:
    """(pseudo-exception, message) for a child that stopped in the middle of a step."""
    if run.ended == "timeout":
        return (
            TIMEOUT,
            f"killed after {limits.hard_timeout:g} s without finishing (an endless loop?)",
        )
    if run.ended == "budget":
        return TIMEOUT, (
            f"{BUDGET_EXHAUSTED}: the submission's program ran for {limits.submission_budget:g} s "
            "in all (a sleep or a deep recursion in every call?)"
        )
    if run.ended == "overflow":
        return INVALID, "the program wrote too much on the grader's channel"
    rc = run.returncode
    if rc is not None and rc > 128:
        rc = 128 - rc  # bwrap and the shim report a child killed by signal N as 128 + N
    if rc is not None and rc < 0:
        sig = -rc
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        hint = {
            "SIGKILL": " (out of memory or time?)",
            "SIGXCPU": " (CPU time limit)",
            "SIGXFSZ": " (file size limit)",
            "SIGSEGV": " (a crash in native code, or out of memory)",
        }.get(name, "")
        return CRASH, f"the program was killed by {name}{hint}"
    return CRASH, f"the program ended (exit status {rc}) in the middle of this check"


def execute(
    cells: list[tuple[str, str]],
    setup: list[tuple[str, str]],
    cases: dict[str, list[dict]],
    iso: Isolation,
    limits: Limits,
    slot: int = 0,
    max_runs: int | None = None,
    runner=None,
) -> Execution:
    """Outcomes of every function on every case, in as many children as it takes.

    ``runner``: where the children run; anything with ``run_child(job, iso, limits, slot,
    cpu_seconds, budget_left) -> ChildRun`` (a :class:`autograder.engine.worker.WorkerPool` for
    batches). By default each child is a fresh interpreter (:func:`child.run_child`).

    All the children of one submission share its time budget (``limits.submission_budget``
    seconds of wall-clock time, each child's counted from its first record, after its
    start-up and the trusted setup: ChildRun.charged): when it runs out the running case
    fails and every case not yet run fails "time budget exhausted", warm or cold alike. A
    child's start-up is bounded by the step timeout, and their number by ``max_runs``.
    """
    start_child = runner.run_child if runner is not None else child.run_child
    names = list(cases)
    ex = Execution(
        {n: FunctionRun(n, [None] * len(cases[n]), [0.0] * len(cases[n])) for n in names}
    )
    skip: list[int] = []
    done_fns: set[str] = set()
    max_runs = max_runs or (len(names) + len(cells) + 2)
    total_cases = sum(len(v) for v in cases.values())
    cpu = int(min(3600, limits.timeout * (total_cases + len(cells) + 4)))
    t0 = time.monotonic()
    used = 0.0  # of the budget, by the children so far
    channel_left = limits.max_stream  # of the outcome channel's bytes, for the children to come
    flooded = False  # the submission wrote all the channel holds
    out_parts: list[str] = []
    err_parts: list[str] = []
    spent = False  # the time budget ran out
    while len(done_fns) < len(names) and ex.runs < max_runs:
        if used >= limits.submission_budget:
            spent = True
            ex.notes.append(f"{BUDGET_EXHAUSTED} ({limits.submission_budget:g} s)")
            break
        if channel_left <= 0:
            flooded = True
            ex.notes.append(f"the outcome channel's {limits.max_stream} bytes are spent")
            break
        plan = []
        for n in names:
            if n in done_fns:
                continue
            start = next(
                (i for i, o in enumerate(ex.functions[n].outcomes) if o is None), len(cases[n])
            )
            plan.append({"name": n, "start": start, "cases": cases[n][start:]})
        job = {"setup": setup, "cells": cells, "skip_cells": skip, "plan": plan}
        child_limits_ = replace(limits, max_stream=channel_left)
        run = start_child(job, iso, child_limits_, slot, cpu, limits.submission_budget - used)
        used += run.charged
        channel_left -= run.channel_bytes
        ex.runs += 1
        out_parts.append(run.stdout)
        err_parts.append(run.stderr)
        state = _Interpreter(ex, plan, cells, skip, done_fns)
        violation = None
        for line in run.lines:
            try:
                if state.feed(parse_line(line)):
                    break
            except ProtocolError as e:
                violation = str(e)
                break
        if state.finished and violation is None:
            break
        if violation is not None:
            kind, msg = (
                INVALID,
                f"the program wrote something the grader does not accept ({violation})",
            )
            ex.notes.append(f"run {ex.runs}: invalid record: {violation}")
        else:
            kind, msg = _why(run, limits)
            ex.notes.append(f"run {ex.runs}: {msg}")
            spent = spent or run.ended == "budget"
        if state.setup_pending:
            ex.setup_error = (
                f"the setup cells could not run in the sandbox: {msg}; stderr: {run.stderr[-500:]}"
            )
            break
        if state.cell is not None:  # the program died while running a learner cell
            ex.cell_errors[state.cell] = f"{msg} while this cell was being run"
            skip.append(state.cell)
            continue
        fn = state.current_fn()
        if fn is None:
            break
        fr = ex.functions[fn]
        first = True
        for i, o in enumerate(fr.outcomes):
            if o is None:
                if first:
                    fr.outcomes[i] = {"raised": kind, "message": msg}
                    first = False
                else:
                    fr.outcomes[i] = {
                        "raised": NOT_RUN,
                        "message": f"not run: {BUDGET_EXHAUSTED}"
                        if run.ended == "budget"
                        else "not run: an earlier check of this function "
                        + ("timed out" if kind == TIMEOUT else "stopped the program"),
                    }
        if first:  # it had finished all its cases: the failure was between functions
            pass
        done_fns.add(fn)
    for n in names:
        fr = ex.functions[n]
        for i, o in enumerate(fr.outcomes):
            if o is None and not fr.missing and fr.error is None:
                fr.outcomes[i] = {
                    "raised": NOT_RUN,
                    "message": f"not run: {BUDGET_EXHAUSTED} ({limits.submission_budget:g} s)"
                    if spent
                    else "not run: the program wrote too much on the grader's channel"
                    if flooded
                    else "not run: the program kept stopping",
                }
    if spent:
        ex.budget_exhausted = (
            f"{BUDGET_EXHAUSTED}: your program ran for {limits.submission_budget:g} s in all "
            "(every call and restart of one submission together), so the checks it had not "
            "finished failed; does a call sleep, wait or recurse deeply?"
        )
    ex.seconds = time.monotonic() - t0
    ex.stdout = "".join(out_parts)[: limits.output_chars]
    ex.stderr = "".join(err_parts)[: limits.output_chars]
    return ex


class _Interpreter:
    """Reads one child's records in the only order the harness writes them."""

    def __init__(
        self, ex: Execution, plan: list[dict], cells, skip: list[int], done_fns: set[str]
    ) -> None:
        self.ex, self.plan, self.done_fns = ex, plan, done_fns
        self.pending_cells = [i for i in range(len(cells)) if i not in skip]
        self.setup_pending = True
        self.cell: int | None = None  # a cell that started and has not finished
        self.fn_index = 0  # position in plan
        self.in_fn = False
        self.next_case = 0
        self.finished = False

    def current_fn(self) -> str | None:
        if self.fn_index < len(self.plan):
            return self.plan[self.fn_index]["name"]
        return None

    def feed(self, rec: dict) -> bool:
        t = rec.get("t")
        if self.finished:
            raise ProtocolError("a record after 'done'")
        if self.setup_pending:
            if t != "setup" or rec.get("status") not in ("ok", "error"):
                raise ProtocolError("expected the setup record")
            if rec["status"] == "error":
                _expect(rec, {"t", "status", "error"})
                self.ex.setup_error = str(rec["error"])[:1000]
                self.finished = True
                for fr in self.ex.functions.values():
                    fr.error = "the setup cells failed in the sandbox: " + self.ex.setup_error
                    fr.outcomes = []
                    fr.seconds = []
                return True
            _expect(rec, {"t", "status"})
            self.setup_pending = False
            return False
        if self.cell is not None:
            if t != "cell" or rec.get("i") != self.cell or rec.get("status") not in ("ok", "error"):
                raise ProtocolError("expected the end of the running cell")
            if rec["status"] == "error":
                _expect(rec, {"t", "i", "status", "error"})
                if type(rec["error"]) is not str:
                    raise ProtocolError("bad cell error")
                self.ex.cell_errors[self.cell] = rec["error"][:1000]
            else:
                _expect(rec, {"t", "i", "status"})
            self.cell = None
            return False
        if t == "cell":
            _expect(rec, {"t", "i", "status"})
            if (
                not self.pending_cells
                or rec["i"] != self.pending_cells[0]
                or rec["status"] != "start"
            ):
                raise ProtocolError("a cell out of order")
            self.cell = self.pending_cells.pop(0)
            return False
        if self.pending_cells:
            raise ProtocolError("cells missing before the functions")
        fn = self.current_fn()
        if t == "done":
            _expect(rec, {"t"})
            if fn is not None or self.in_fn:
                raise ProtocolError("'done' before every function ran")
            self.finished = True
            return True
        if fn is None:
            raise ProtocolError("a record after the last function")
        fr = self.ex.functions[fn]
        if not self.in_fn:
            _expect(rec, {"t", "name", "status"})
            if t != "fn" or rec["name"] != fn or rec["status"] not in ("start", "missing"):
                raise ProtocolError("expected the next function")
            if rec["status"] == "missing":
                fr.missing = True
                fr.outcomes = []
                fr.seconds = []
                self.done_fns.add(fn)
                self.fn_index += 1
            else:
                self.in_fn = True
                self.next_case = self.plan[self.fn_index]["start"]
            return False
        if t == "case":
            _expect(rec, {"t", "name", "i", "outcome", "seconds"})
            if (
                rec["name"] != fn
                or rec["i"] != self.next_case
                or self.next_case >= len(fr.outcomes)
            ):
                raise ProtocolError("a case out of order")
            s = rec["seconds"]
            if type(s) not in (int, float) or not (0 <= s < 1e6):
                raise ProtocolError("bad seconds")
            fr.outcomes[self.next_case] = validate_outcome(rec["outcome"])
            fr.seconds[self.next_case] = float(s)
            self.next_case += 1
            return False
        if t == "fn_end":
            _expect(rec, {"t", "name"})
            if rec["name"] != fn:
                raise ProtocolError("the end of another function")
            if self.next_case < len(fr.outcomes):
                last = fr.outcomes[self.next_case - 1] if self.next_case else None
                if not (last and last.get("raised") == TIMEOUT):
                    raise ProtocolError("a function ended early")
                for i in range(self.next_case, len(fr.outcomes)):
                    fr.outcomes[i] = {
                        "raised": NOT_RUN,
                        "message": "not run: an earlier check of this function timed out",
                    }
            self.in_fn = False
            self.done_fns.add(fn)
            self.fn_index += 1
            return False
        raise ProtocolError(f"unexpected record {str(t)[:20]!r}")
