"""What a submission may use, in every mode: the step timeout, the rlimits, the outcome
channel's size and the time budget of the whole submission (:class:`Limits`); the limits a
child sets on itself (:func:`child_limits`, read by ``child_harness.limit_self``, cold or
warm); and a pids cgroup (:func:`_pids_cgroup`) that holds the process limit where the child
keeps the grader's root uid and RLIMIT_NPROC does not hold.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BUDGET_STEPS = 5  # the default time budget of a submission, in step timeouts
BUDGET_EXHAUSTED = "time budget exhausted"


@dataclass(frozen=True)
class Limits:
    timeout: float = 30.0  # seconds one step (a cell, or one call) may take
    memory_mb: int = 2048  # address space
    nproc: int = 64  # processes and threads
    fsize_mb: int = 64  # largest file the child may write
    output_chars: int = 20_000  # learner stdout/stderr kept per stream
    # The outcome channel. Every record the grader accepts is held (parsed, several times its
    # size in memory) until the submission is scored, so what a submission may write there is
    # bounded whatever it writes: one record, and all records of all its children together.
    # A reference solution writes 10-31 KB in all (its largest record 1 KB) in every
    # notebook; a larger honest return value fails its case as "too large" (child_harness).
    max_line: int = 1024 * 1024  # one record on the outcome pipe
    max_stream: int = 4 * 1024 * 1024  # all records of one submission, every child together
    budget: float | None = None  # wall-clock seconds for one submission (None: BUDGET_STEPS steps)

    @property
    def submission_budget(self) -> float:
        """Wall-clock seconds one submission's program may take in all, its children and
        restarts together: a step's timeout bounds one call, this bounds their sum (a
        submission that sleeps or recurses in every call). Each child's time counts from its
        first record (after its start-up and the trusted setup cells), so that a cold child
        and a warm job, whose start-ups differ, spend it alike."""
        return self.budget if self.budget is not None else BUDGET_STEPS * self.timeout

    @property
    def hard_timeout(self) -> float:
        """The watchdog: a little after the child's own alarm, for code that ignores it."""
        return self.timeout + max(2.0, 0.25 * self.timeout)


def child_limits(limits: Limits, cpu_seconds: float, nproc: int | None = None) -> dict:
    """The limits a child sets on itself before any learner code runs
    (``child_harness.limit_self``), cold or warm: the zygote adds to ``nproc`` the tasks its
    sandbox already runs, as the uid's count holds them."""
    return {
        "memory_mb": limits.memory_mb,
        "fsize_mb": limits.fsize_mb,
        "nproc": limits.nproc if nproc is None else nproc,
        "cpu_seconds": int(cpu_seconds),
    }


# -- a pids cgroup, where a uid cannot hold the process limit ----------------------------------

_CGROUP_BASES = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))


def _pids_cgroup(limit: int) -> Path | None:
    """A fresh pids cgroup capped at ``limit`` tasks, or None where we cannot make one.

    As root, RLIMIT_NPROC is not enforced, so when the child cannot run as another uid a
    fork bomb is held by the cgroup instead (cgroup v1 ``pids`` or v2 with ``pids`` enabled).
    """
    if os.geteuid() != 0:
        return None
    for base in _CGROUP_BASES:
        try:
            if base.name != "pids" and "pids" not in (base / "cgroup.subtree_control").read_text():
                continue
            cg = Path(tempfile.mkdtemp(prefix="drills-", dir=base))
            (cg / "pids.max").write_text(str(limit))
            return cg
        except OSError:
            continue
    return None


def _in_cgroup(cg: Path, cmd: list[str]) -> list[str]:
    """``cmd`` started by a shell that first moves itself into ``cg`` (no preexec_fn, thread-safe)."""
    return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(cg / "cgroup.procs"), *cmd]


def _release_cgroup(cg: Path | None, wait_s: float = 30.0) -> None:
    """Kill what is left in ``cg`` and remove it, waiting (up to ``wait_s``) until its last
    process has gone: on a loaded machine a held fork bomb's processes can take seconds to
    exit after SIGKILL, and a cgroup removed too early stays behind for good. One that is
    still busy after the wait is named on stderr (the grading itself is not affected)."""
    if cg is None:
        return
    deadline = time.monotonic() + wait_s
    pause = 0.005
    while True:
        try:
            (cg / "cgroup.kill").write_text("1")  # cgroup v2 (Linux 5.14+): every task at once
        except OSError:
            pass
        try:
            pids = [int(x) for x in (cg / "cgroup.procs").read_text().split()]
        except OSError:
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            cg.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as e:
            if time.monotonic() >= deadline:
                print(
                    f"drills: could not remove the sandbox's cgroup {cg} after {wait_s:g} s "
                    f"({e.strerror}); remove it with rmdir once its processes are gone",
                    file=sys.stderr,
                )
                return
        time.sleep(pause)  # until its processes have exited (checked again at once after)
        pause = min(0.2, pause * 2)
