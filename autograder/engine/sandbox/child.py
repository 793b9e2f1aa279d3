"""One cold child, in every mode: started on a job (:func:`run_child`), its records, stdout and
stderr read until it ends, a step times out (the watchdog), the submission's time budget runs
out or it writes too much (:func:`_collect`, which reads a warm worker's job alike), then
killed with everything it started.
"""

from __future__ import annotations

import json
import math
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.engine.sandbox import common, folders, launch, reduced, resources
from autograder.engine.sandbox.common import Isolation, SandboxError
from autograder.engine.sandbox.resources import Limits


@dataclass
class ChildRun:
    lines: list[bytes]
    ended: str  # "exit" | "timeout" | "budget" | "overflow"
    returncode: int | None
    stdout: str
    stderr: str
    stdout_bytes: int
    stderr_bytes: int
    seconds: float
    bwrap: bool = False
    # seconds charged to the submission's time budget: from the child's first record (the
    # trusted setup has run; learner code runs next) to its end. A fresh interpreter's
    # start-up, which a warm worker does not have, is not charged, so that both spend a
    # budget alike.
    charged: float = 0.0
    channel_bytes: int = 0  # what it wrote on the outcome channel


def run_child(
    job: dict,
    iso: Isolation,
    limits: Limits,
    slot: int = 0,
    cpu_seconds: int = 600,
    budget_left: float | None = None,
) -> ChildRun:
    """Start one child on ``job``, read its records until it ends, a step times out or what
    is left of the submission's time budget (``budget_left`` seconds, counted from the
    child's first record) runs out."""
    tmp = folders.scratch_dir("child")
    try:
        return _run_in(tmp, job, iso, limits, slot, cpu_seconds, budget_left)
    finally:
        folders.release_scratch(tmp)


def _run_in(
    tmp: Path,
    job: dict,
    iso: Isolation,
    limits: Limits,
    slot: int,
    cpu_seconds: int,
    budget_left: float | None = None,
) -> ChildRun:
    box = launch.make_box(
        tmp, iso, slot, {"harness.py": launch.HARNESS.read_text(encoding="utf-8")}
    )
    uid = common._child_uid(slot) if iso.drop_uid else None
    nproc = limits.nproc + (0 if iso.bubblewrap else reduced._user_tasks(uid or os.geteuid()))
    box.put("job.json", json.dumps(launch.full_job(job, limits, box.sys_path)))
    exe, _ = common._interpreter()
    r, w = os.pipe()  # the outcome channel; the child keeps the same descriptor number
    own = json.dumps(resources.child_limits(limits, cpu_seconds, nproc))
    argv = [str(exe), "-s", "-S", "-B", f"{box.in_path}/harness.py", f"{box.in_path}/job.json"]
    t0 = time.monotonic()
    try:
        proc, cg = launch.start_in_box(
            box, iso, slot, [*argv, str(w), own], tasks=limits.nproc + 8, pass_fds=(w,)
        )
    except SandboxError:
        os.close(r)
        raise
    finally:
        os.close(w)
    try:
        handle = _PopenHandle(proc, iso, uid)
        return _collect(handle, r, limits, t0, iso.bubblewrap, budget_left)
    finally:
        resources._release_cgroup(cg)


def _kill(proc: subprocess.Popen, iso: Isolation, uid: int | None) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if not iso.bubblewrap and uid is not None:
        reduced._kill_uid(uid)


class ChildHandle:
    """A running child as :func:`_collect` sees it (a process, or a warm worker's job)."""

    stdout_fd: int
    stderr_fd: int
    returncode: int | None

    def poll(self) -> int | None:  # the exit status once it has ended
        raise NotImplementedError

    def kill(self, grace: bool = False) -> None:
        """End it and everything it started. ``grace``: it is ending on its own (its pipes
        closed); a moment may be given for its own exit status to arrive."""
        raise NotImplementedError

    def wait(self, timeout: float) -> None:  # after kill(): until it has ended
        raise NotImplementedError

    def close(self) -> None:  # the parent's ends of its pipes
        raise NotImplementedError


class _PopenHandle(ChildHandle):
    def __init__(self, proc: subprocess.Popen, iso: Isolation, uid: int | None) -> None:
        self.proc, self.iso, self.uid = proc, iso, uid
        self.stdout_fd, self.stderr_fd = proc.stdout.fileno(), proc.stderr.fileno()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def poll(self) -> int | None:
        return self.proc.poll()

    def kill(self, grace: bool = False) -> None:
        _kill(self.proc, self.iso, self.uid)

    def wait(self, timeout: float) -> None:
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass

    def close(self) -> None:
        self.proc.stdout.close()
        self.proc.stderr.close()


def _collect(
    proc: ChildHandle,
    out_r: int,
    limits: Limits,
    t0: float,
    bwrap: bool,
    budget_left: float | None = None,
) -> ChildRun:
    """Read a child's records, stdout and stderr until it ends, a step times out (the
    watchdog: no record for ``limits.hard_timeout`` seconds), what is left of the
    submission's time budget (``budget_left`` seconds from its first record) is spent
    (ended "budget"), or it writes too much. A cold child and a warm job are killed alike
    at once when the watchdog or the budget ends them."""
    budget_left = math.inf if budget_left is None else max(0.0, budget_left)
    budget_end = math.inf  # set at the first record
    first_record: float | None = None
    sel = selectors.DefaultSelector()
    streams = {out_r: "out", proc.stdout_fd: "stdout", proc.stderr_fd: "stderr"}
    for fd in streams:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    buf = bytearray()
    lines: list[bytes] = []
    kept = {"stdout": bytearray(), "stderr": bytearray()}
    counts = {"out": 0, "stdout": 0, "stderr": 0}
    keep = limits.output_chars * 4
    ended = "exit"
    deadline = min(time.monotonic() + limits.hard_timeout, budget_end)
    exited_at: float | None = None
    while sel.get_map():
        now = time.monotonic()
        if proc.poll() is not None and exited_at is None:
            exited_at = now
        if exited_at is not None and now - exited_at > 1.0:
            break  # leftovers of a child that has exited hold the pipes open
        if now >= deadline:
            ended = "budget" if now >= budget_end else "timeout"
            break
        wait = min(deadline - now, 0.2)
        for key, _ in sel.select(timeout=wait):
            fd = key.fd
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(fd)
                continue
            name = streams[fd]
            counts[name] += len(data)
            if name != "out":
                room = keep - len(kept[name])
                if room > 0:
                    kept[name] += data[:room]
                continue
            if counts["out"] > limits.max_stream:
                ended = "overflow"
                break
            buf += data
            while True:
                nl = buf.find(b"\n")
                if nl < 0:
                    break
                lines.append(bytes(buf[:nl]))
                del buf[: nl + 1]
                now = time.monotonic()
                if first_record is None:
                    first_record, budget_end = now, now + budget_left
                deadline = min(now + limits.hard_timeout, budget_end)
            if len(buf) > limits.max_line:
                ended = "overflow"
                break
        if ended == "overflow":
            break
    ended_at = time.monotonic()
    proc.kill(grace=ended == "exit")
    proc.wait(timeout=10)
    for fd in list(sel.get_map()):
        sel.unregister(fd)
    sel.close()
    os.close(out_r)
    proc.close()
    if buf and ended == "exit":
        lines.append(bytes(buf))  # an unterminated last line: validated (and rejected) later
    return ChildRun(
        lines=lines,
        ended=ended,
        returncode=proc.returncode,
        stdout=kept["stdout"].decode("utf-8", "replace")[: limits.output_chars],
        stderr=kept["stderr"].decode("utf-8", "replace")[: limits.output_chars],
        stdout_bytes=counts["stdout"],
        stderr_bytes=counts["stderr"],
        seconds=time.monotonic() - t0,
        bwrap=bwrap,
        charged=0.0 if first_record is None else ended_at - first_record,
        channel_bytes=counts["out"],
    )
