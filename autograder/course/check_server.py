"""The "Check my work" button's grader process: warm it once per kernel, then answer clicks.

    python -m autograder.cli warm ASSIGNMENT --quiet --serve

What ``drills warm ASSIGNMENT`` does (fill the outcome cache with the expected and the
known-mistake outcomes), plus what a cold ``drills check`` pays on every click: the
interpreter and the grader's imports, the notebook schema's compiled validator, the
reference outcomes read or computed, and a sandboxed child importing numpy (and torch for
05-06). Here they are paid once, at kernel start, in the background: one warm worker (a
zygote, engine/worker.py) is started for the assignment and reused by every check.

Protocol (one line each way, JSON): the widget writes ``{"path": "NOTEBOOK"}`` on stdin;
the answer is ``{"returncode": N, "stdout": "...", "stderr": "..."}``, what
``drills check NOTEBOOK --json`` would have exited with and printed: the same parser, the
same defaults and the same code (grade_cli's ``_check_cmd``), with a Grader built as
``check_notebook`` builds one. End of stdin (the kernel is gone): finish the warm-up, exit.

A click while the warm-up runs joins it instead of redoing it: the reference outcomes are
computed once under the Grader's lock, a function's mistakes once under its own lock
(memo.LazyMistakes). The known mistakes are the warm-up's background work: when a click
comes, the warm-up gives way between two mistakes (evaluate.yielding_to: it drops the
function it was on, so the click has the process to itself and computes a function's
mistakes only if its own failures need them) and takes up that function again once the
click is answered. The warm-up goes in the notebook's order, so the function a learner
checks first comes first.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from autograder.engine import submission, worker
from autograder.notebooks import course_values, notebook, streams
from autograder.scoring import evaluate


class CheckServer:
    """``check_args(PATH)``: the arguments of ``drills check PATH --json`` from the CLI's own
    parser; ``check_cmd(args, grader)``: the command itself; ``grader``: a Grader built as
    ``drills check`` builds one with those arguments' defaults (all three from grade_cli,
    which calls :func:`serve`; passed in, so this module does not import it back)."""

    def __init__(
        self,
        assignment: str,
        check_args: Callable[[str], argparse.Namespace],
        check_cmd: Callable[..., int],
        grader: Any,
    ) -> None:
        self.assignment = assignment
        self.check_args, self.check_cmd, self.grader = check_args, check_cmd, grader
        self.grader.runner = worker.WorkerPool(self.grader.isolation, self.grader.limits)
        self.idle = threading.Event()  # set while no check runs: the warm-up may go on
        self.idle.set()
        self.warmed = threading.Event()

    def start(self) -> None:
        """Start the zygote and the warm-up, both in the background."""
        runner = self.grader.runner
        assert runner is not None
        try:
            runner.prestart(1, self.grader._preloads([self._source_submission()]))
        except Exception:  # noqa: BLE001 (no warm worker: checks run cold children, same result)
            pass
        threading.Thread(target=self._warm, daemon=True).start()

    def _source_submission(self) -> submission.Submission:
        path = notebook.source_path(self.assignment, self.grader.root)
        return submission.Submission(path=path, student="warm", assignment=self.assignment)

    def _warm(self) -> None:
        try:
            # what a check needs first: the reference outcomes (under the Grader's lock, which
            # a click's check then waits on rather than computing them again)
            prep = self.grader.prepare(self.assignment)
            if not course_values.active(self.grader.root):  # the course form has no notebook
                submission.load_notebook(notebook.source_path(self.assignment, self.grader.root))
            for name in prep.names:  # the notebook's order: the learner's first function first
                while True:
                    self.idle.wait()
                    try:
                        with evaluate.yielding_to(self.idle):
                            len(prep.shared.mutants[name])
                        break
                    except evaluate.Yielded:  # a click came: it goes first, then this again
                        continue
        except Exception:  # noqa: BLE001 (a failed warm-up changes nothing: checks compute it)
            pass
        finally:
            self.warmed.set()

    def check(self, path: str) -> dict:
        """What ``drills check PATH --json`` exits with and prints, computed here."""
        out, err = io.StringIO(), io.StringIO()
        self.idle.clear()
        try:
            with streams.redirected(out, err):
                try:
                    rc = self.check_cmd(self.check_args(path), grader=self.grader)
                except SystemExit as e:  # argparse on a path it refuses
                    rc = e.code if isinstance(e.code, int) else 2
        finally:
            self.idle.set()
        return {"returncode": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}

    def close(self) -> None:
        if self.grader.runner is not None:
            self.grader.runner.close()


def serve(assignment: str, check_args, check_cmd, grader) -> int:
    """Warm up, then answer check requests on stdin until it ends (module docstring; the
    arguments: CheckServer's)."""
    # The answers go to the real stdout, and nothing else may: whatever else writes to
    # descriptor 1 (a library's C code, a warning) goes to stderr instead.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), line_buffering=True)
    # a click's captured output and the warm-up's quieted output are each their own thread's
    streams.per_thread()
    server = CheckServer(assignment, check_args, check_cmd, grader)
    server.start()
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                path = str(json.loads(line)["path"])
            except (ValueError, KeyError, TypeError):
                answers.write(json.dumps({"returncode": 2, "stdout": "", "stderr": "bad request"}))
                answers.write("\n")
                continue
            answers.write(json.dumps(server.check(path)) + "\n")
        server.warmed.wait()
    finally:
        server.close()
    return 0
