"""One thread's output redirected without touching another thread's.

``contextlib.redirect_stdout`` swaps ``sys.stdout`` for the whole process and puts back, on
exit, whatever it found on entry. In the check server (course/check_server.py) two threads
redirect at once: the warm-up quiets the reference notebook's cells and the known mistakes,
and a click captures what ``drills check --json`` prints. When their redirections overlap,
the one that ends first puts back the stream the other had replaced: the click's report
then goes to the real stdout instead of its buffer, and the learner is told the check gave
no report.

:func:`per_thread` (the check server calls it once, before it starts a thread) makes
``sys.stdout`` and ``sys.stderr`` forward to a stream of the calling thread's choosing, the
process's own by default; :func:`redirected` then redirects the calling thread alone. In a
process without it (``drills check``, ``drills grade``, a kernel) :func:`redirected` is
``contextlib``'s redirection, as before.
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
from typing import TextIO


class _PerThread(io.TextIOBase):
    """A text stream that writes where the calling thread says (``local.target``), or to
    ``default``."""

    def __init__(self, default: TextIO) -> None:
        self.default = default
        self.local = threading.local()

    def target(self) -> TextIO:
        return getattr(self.local, "target", None) or self.default

    def write(self, s: str) -> int:
        return self.target().write(s)

    def flush(self) -> None:
        self.target().flush()

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.target().fileno()

    def isatty(self) -> bool:
        return self.target().isatty()

    @property
    def encoding(self):  # type: ignore[override]
        return getattr(self.target(), "encoding", "utf-8")


def per_thread() -> None:
    """From now on, :func:`redirected` in any thread of this process redirects that thread's
    output only. Call it before starting the threads that redirect."""
    if not isinstance(sys.stdout, _PerThread):
        sys.stdout = _PerThread(sys.stdout)
    if not isinstance(sys.stderr, _PerThread):
        sys.stderr = _PerThread(sys.stderr)


@contextlib.contextmanager
def redirected(stdout: TextIO | None = None, stderr: TextIO | None = None):
    """This thread's stdout and/or stderr to the given streams while the block runs (the
    process's, where :func:`per_thread` was not called)."""
    chosen = [(s, new) for s, new in ((sys.stdout, stdout), (sys.stderr, stderr)) if new]
    if all(isinstance(s, _PerThread) for s, _ in chosen):
        before = [(s, getattr(s.local, "target", None)) for s, _ in chosen]
        for s, new in chosen:
            s.local.target = new
        try:
            yield
        finally:
            for s, old in before:
                s.local.target = old
        return
    with contextlib.ExitStack() as stack:
        if stdout is not None:
            stack.enter_context(contextlib.redirect_stdout(stdout))
        if stderr is not None:
            stack.enter_context(contextlib.redirect_stderr(stderr))
        yield
