"""The program `drills grade` runs inside the sandbox. A standalone script.

It imports nothing from ``autograder`` (the child must not see the grader's
files): the parent writes this file's text, the text of the trusted
``autograder/cases/codec.py`` and a job file into the child's temporary folder, then
runs ``python harness.py job.json FD LIMITS`` (or, for batches, the warm worker of
``zygote.py`` loads it once and calls :func:`run` in a fresh fork per job). The
harness:

1. adds the allowed library folders to ``sys.path`` and loads the codec text;
2. runs the trusted setup cells, then each learner solution cell (each in its own
   ``try``; a cell that raises is reported and the rest still run);
3. for each graded function of the plan, calls it once per case on freshly
   decoded inputs (warnings silenced, a per-call alarm), and encodes the outcome;
4. writes one JSON record per step on file descriptor FD (never stdout), then
   exits with ``os._exit`` (no learner ``atexit`` hook runs).

Records, one JSON object per line::

    {"t": "setup", "status": "ok"}                    or  "status": "error", "error": "..."
    {"t": "cell", "i": 0, "status": "start"}          then "ok", or "error" with "error"
    {"t": "fn", "name": "forward_kl", "status": "start"}     or "missing"
    {"t": "case", "name": "forward_kl", "i": 3, "outcome": {...}, "seconds": 0.0001}
    {"t": "fn_end", "name": "forward_kl"}
    {"t": "done"}

After a call that hit the alarm the harness ends that function early (the
parent marks the rest of its cases not run). Learner output on stdout and
stderr goes to bounded sinks. A process forked by learner code leaves at once
after the call returns in it, so only the original process ever writes records.
"""

import json
import os
import signal
import sys
import time
import types

_dumps = json.dumps
_write = os.write
_getpid = os.getpid
_exit = os._exit
_monotonic = time.perf_counter
RANDOM_SEED = 0  # every call starts from this random state (see run's reseed)
_COMPILED = {}  # codec text -> its code object: compiled once in a warm worker (precompile)


def precompile(codec_text):
    """Compile the codec once, before the warm worker forks its jobs: a job whose codec is
    this text execs the same code object in a fresh module (compiling it took 7-10 ms of
    every job). A cold child, or a job sent another text, compiles what it was sent."""
    _COMPILED[codec_text] = code = compile(codec_text, "<codec>", "exec")
    # run once in a module of its own, thrown away: what the codec imports (dataclasses, copy,
    # __future__) is then loaded before the fork, not in every job
    exec(code, types.ModuleType("drills_codec_preload").__dict__)  # noqa: S102 (trusted text)


def preload():
    """Import, before the warm worker forks its jobs, what every job imports on its way to the
    learner's cells: the resource limits, the streams and warnings machinery, and the random
    generators ``run`` reseeds (numpy loads ``numpy.random`` on first use: eleven extension
    modules, about 10 ms of every job). Each job still starts from RANDOM_SEED (``run``'s
    reseed), so a preloaded generator is in the same state as one imported in the job."""
    import ast  # noqa: F401 (with math, re and dataclasses: what the setup cells import)
    import contextlib  # noqa: F401
    import dataclasses  # noqa: F401
    import io  # noqa: F401
    import math  # noqa: F401
    import random  # noqa: F401
    import re  # noqa: F401
    import resource  # noqa: F401
    import warnings  # noqa: F401

    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(RANDOM_SEED)


class _CaseTimeout(BaseException):
    """Raised by the alarm inside a learner call (BaseException: `except Exception` keeps it)."""


class _Sink:
    """A text stream that forwards at most ``limit`` characters to ``fd`` and drops the rest."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, fd, limit):
        self.fd, self.left = fd, limit

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str")
        if self.left > 0 and s:
            chunk = s[: self.left]
            self.left -= len(chunk)
            try:
                _write(self.fd, chunk.encode("utf-8", "replace"))
            except OSError:
                self.left = 0
        return len(s)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def isatty(self):
        return False

    def writable(self):
        return True

    def fileno(self):
        return self.fd


def _message(e):
    try:
        return str(e)[:500]
    except BaseException:  # noqa: BLE001
        return "<unprintable message>"


def limit_self(limits):
    """Set the job's resource limits on this process, before any learner code runs: a cold
    child's ``main`` and a warm job (zygote.py) alike. ``limits``: memory_mb, fsize_mb, nproc,
    cpu_seconds (the parent's ``sandbox.child_limits``)."""
    import resource as r

    mb = 1024 * 1024
    for key, value in (
        (r.RLIMIT_AS, int(limits["memory_mb"]) * mb),
        (r.RLIMIT_FSIZE, int(limits["fsize_mb"]) * mb),
        (r.RLIMIT_NPROC, int(limits["nproc"])),
        (r.RLIMIT_CORE, 0),
        (r.RLIMIT_NOFILE, 512),
    ):
        r.setrlimit(key, (value, value))
    cpu = int(limits["cpu_seconds"])
    r.setrlimit(r.RLIMIT_CPU, (cpu, cpu + 5))


def main(argv):
    limit_self(json.loads(argv[3]))
    job_path, out_fd = argv[1], int(argv[2])
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(job_path)):
        sys.path.pop(0)
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    run(job, out_fd)


def run(job, out_fd):
    """Run one job, writing its records on ``out_fd``; ends the process (``os._exit``).

    ``main`` calls it in a fresh interpreter; the warm worker (zygote.py) in a forked one.
    """
    main_pid = _getpid()
    sys.path.extend(p for p in job["sys_path"] if p not in sys.path)
    max_line = int(job["max_line"])
    case_timeout = float(job["case_timeout"])

    def emit(record):
        if _getpid() != main_pid:
            _exit(0)
        try:
            line = _dumps(record, allow_nan=False, separators=(",", ":"))
        except BaseException as e:  # noqa: BLE001 (a corrupted codec: report it as the outcome)
            if record.get("t") != "case":
                raise
            record = dict(
                record,
                outcome={
                    "raised": "UnsupportedReturn",
                    "message": f"not encodable: {_message(e)[:200]}",
                },
            )
            line = _dumps(record, allow_nan=False, separators=(",", ":"))
        if len(line) > max_line and record.get("t") == "case":
            record = dict(
                record,
                outcome={
                    "raised": "UnsupportedReturn",
                    "message": "the returned value is too large",
                },
            )
            line = _dumps(record, separators=(",", ":"))
        data = (line + "\n").encode("utf-8")
        try:
            while data:
                n = _write(out_fd, data)
                data = data[n:]
        except OSError:
            _exit(70)

    sys.stdout = _Sink(1, int(job["output_chars"]))
    sys.stderr = _Sink(2, int(job["output_chars"]))

    import contextlib
    import io
    import warnings

    codec = types.ModuleType("drills_codec")
    codec_ns = codec.__dict__
    try:
        code = _COMPILED.get(job["codec"]) or compile(job["codec"], "<codec>", "exec")
        exec(code, codec_ns)  # noqa: S102 (trusted text from the parent)
        try:
            import numpy as np
        except ImportError:  # pragma: no cover
            np = None
    except BaseException as e:  # noqa: BLE001
        emit(
            {
                "t": "setup",
                "status": "error",
                "error": f"harness: {type(e).__name__}: {_message(e)}",
            }
        )
        _exit(0)
    outcome_of = codec_ns["outcome_of"]

    @contextlib.contextmanager
    def silenced():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            errstate = np.errstate(all="ignore") if np is not None else contextlib.nullcontext()
            with errstate, contextlib.redirect_stderr(io.StringIO()):
                yield

    module = types.ModuleType("drills_submission")
    module.__file__ = "<submission>"
    sys.modules[module.__name__] = module  # dataclasses look their module up here
    ns = module.__dict__

    try:
        with silenced():
            for gid, src in job["setup"]:
                exec(compile(src, f"<setup:{gid}>", "exec"), ns)  # noqa: S102 (trusted source cells)
    except BaseException as e:  # noqa: BLE001
        emit({"t": "setup", "status": "error", "error": f"{type(e).__name__}: {_message(e)}"})
        _exit(0)
    emit({"t": "setup", "status": "ok"})
    # the autograd entry points gradient outcomes use, taken before any learner code runs
    codec_ns["seal_autograd"]()

    def on_alarm(signum, frame):
        raise _CaseTimeout()

    import random

    def reseed():
        """The same random state for the learner's cells and for every call, in a cold child
        and in a warm job alike (a fork of a zygote would otherwise carry the zygote's state):
        Python's ``random``, numpy's global generator and torch's, seeded with RANDOM_SEED."""
        try:
            random.seed(RANDOM_SEED)
            if np is not None:
                np.random.seed(RANDOM_SEED)
            torch = sys.modules.get("torch")
            if torch is not None:
                # the CPU generator (the sandbox has no GPU): 4 us, where torch.manual_seed,
                # which also looks for every device's, takes 0.5 ms
                torch.default_generator.manual_seed(RANDOM_SEED)
        except _CaseTimeout:
            raise
        except BaseException:  # noqa: BLE001 (learner code broke a generator: its own loss)
            pass

    reseed()
    skip = set(job["skip_cells"])
    for i, (gid, src) in enumerate(job["cells"]):
        if i in skip:
            continue
        emit({"t": "cell", "i": i, "status": "start"})
        try:
            signal.signal(signal.SIGALRM, on_alarm)
            with silenced():
                signal.setitimer(signal.ITIMER_REAL, case_timeout)
                try:
                    exec(compile(src, f"<cell:{gid}>", "exec"), ns)  # noqa: S102 (the learner's cell, sandboxed)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except _CaseTimeout:
            emit(
                {
                    "t": "cell",
                    "i": i,
                    "status": "error",
                    "error": f"the cell took longer than {case_timeout:g} s to run",
                }
            )
            continue
        except BaseException as e:  # noqa: BLE001 (SystemExit too: the learner's error is the outcome)
            if _getpid() != main_pid:
                _exit(0)
            emit(
                {
                    "t": "cell",
                    "i": i,
                    "status": "error",
                    "error": f"{type(e).__name__}: {_message(e)}",
                }
            )
            continue
        emit({"t": "cell", "i": i, "status": "ok"})

    for item in job["plan"]:
        name, start = item["name"], int(item["start"])
        fn = ns.get(name)
        if not callable(fn):
            emit({"t": "fn", "name": name, "status": "missing"})
            continue
        emit({"t": "fn", "name": name, "status": "start"})
        for k, inp in enumerate(item["cases"]):
            t0 = _monotonic()
            try:
                signal.signal(signal.SIGALRM, on_alarm)
                with silenced():
                    signal.setitimer(signal.ITIMER_REAL, case_timeout)
                    try:
                        reseed()
                        with codec_ns["served_callees"](ns, inp.get("serve")):
                            out = outcome_of(fn, inp["args"], inp["kwargs"], ns, inp.get("grad"))
                    finally:
                        signal.setitimer(signal.ITIMER_REAL, 0)
            except _CaseTimeout:
                out = {
                    "raised": "Timeout",
                    "message": f"the call took longer than {case_timeout:g} s",
                }
            except BaseException as e:  # noqa: BLE001 (SystemExit, KeyboardInterrupt, MemoryError...)
                out = {"raised": type(e).__name__, "message": _message(e)}
            seconds = _monotonic() - t0
            if _getpid() != main_pid:
                _exit(0)
            emit(
                {
                    "t": "case",
                    "name": name,
                    "i": start + k,
                    "outcome": out,
                    "seconds": round(seconds, 6),
                }
            )
            if out.get("raised") == "Timeout":
                break
        emit({"t": "fn_end", "name": name})
    emit({"t": "done"})
    _exit(0)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except BaseException:  # noqa: BLE001 (never a traceback: the parent reads the records)
        _exit(71)
