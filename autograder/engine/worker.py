"""Warm workers for batches: no interpreter, numpy or torch start-up per submission.

A cold child (sandbox.run_child) starts Python and imports numpy, and torch for
05 and 06 (about 1.4 s), for every submission. A :class:`WorkerPool` instead
keeps, per grading slot, one *zygote* (zygote.py) in a bubblewrap sandbox built
by the same code as a cold child's (sandbox.make_box, sandbox.start_in_box); it
has imported what the assignment's setup cells import and forks one fresh,
isolated child per job (zygote.py says how: namespaces, its own /proc, a private
/tmp, dropped capabilities, a cold child's rlimits, keyrings and user namespaces
refused). The pool has
the interface of :func:`sandbox.run_child`, so ``sandbox.execute(...,
runner=pool)`` uses it, the records are read and checked by the same code
(:func:`sandbox.child._collect`, the strict record protocol), and the watchdog is
the parent's, as for a cold child: no record for ``hard_timeout`` seconds and
the job's processes are killed (the zygote kills them; if it does not answer,
the whole sandbox is).

It is used only where it can be trusted: bubblewrap present, a seccomp filter
for this machine, and a probe job in the new zygote showing every isolation
promise holds (zygote.py); otherwise, and whenever a zygote dies or misbehaves,
the job runs in a cold child (the same result, slower). ``DRILLS_WARM=off``
turns it off.
"""

from __future__ import annotations

import ast
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from autograder.engine import sandbox
from autograder.engine.sandbox import (
    ChildHandle,
    ChildRun,
    Isolation,
    Limits,
    child,
    common,
    resources,
)
from autograder.scoring import cache

ZYGOTE = Path(__file__).with_name("zygote.py")
CAPS = ("CAP_SYS_ADMIN", "CAP_SETPCAP")  # the zygote's, in the sandbox's user namespace only
TMP_MB = 256  # each job's /tmp and /dev/shm (tmpfs)
START_TIMEOUT_S = 120.0
ALWAYS_PRELOAD = ("numpy",)  # the harness imports it for every job


class WorkerUnavailable(RuntimeError):
    """A zygote could not start here, or its probe found an isolation promise broken."""


class WorkerFailed(RuntimeError):
    """A zygote died or stopped answering in the middle of a job (the job is run cold)."""


def _job_limits(limits: Limits, cpu_seconds: float) -> dict:
    """The limits of one job (or the probe): a cold child's (the zygote adds its own tasks to
    the process limit, as the uid's count holds them), and the size of its /tmp and /dev/shm."""
    return dict(sandbox.child_limits(limits, cpu_seconds), tmp_mb=TMP_MB)


def warm_possible(iso: Isolation) -> str | None:
    """Why warm workers cannot be used with this isolation (None: they may be tried)."""
    if cache.switched_off("DRILLS_WARM"):
        return "turned off (DRILLS_WARM=off)"
    if iso.mode == "bwrap-noproc":
        return "needs bubblewrap with its own /proc (a zygote mounts one for each job)"
    if iso.mode != "bwrap":
        return "needs bubblewrap"
    if sandbox.seccomp_filter() is None:
        return "no seccomp filter for this machine"
    if not hasattr(os, "pidfd_open") or not hasattr(socket, "send_fds"):
        return "needs Linux pidfd and descriptor passing"
    return None


_PRELOADS: dict[tuple[str, ...], tuple[str, ...]] = {}


def preload_for(setup: list) -> tuple[str, ...]:
    """Installed (not standard-library) modules the trusted setup cells import at top level:
    numpy for 01-04, numpy and torch for 05-06 (one zygote serves each set).

    Kept per setup text, so the thread that drives the jobs does not parse: the grader works
    it out first on its main thread (Grader._preloads, for the workers it starts). CPython
    3.11 builds AST objects with a counter shared by all threads, so two threads parsing at
    once can fail with "SystemError: AST constructor recursion depth mismatch"
    (python/cpython#106905); a notebook's reading failed that way in a fresh-clone test run."""
    key = tuple(str(src) for _gid, src in setup)
    known = _PRELOADS.get(key)
    if known is None:
        known = _PRELOADS[key] = _preload_for(setup)
    return known


def _preload_for(setup: list) -> tuple[str, ...]:
    names = set(ALWAYS_PRELOAD)
    for _gid, src in setup:
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return tuple(sorted(names - set(sys.stdlib_module_names)))


class _JobHandle(ChildHandle):
    """A job running in a zygote, as sandbox.child._collect sees a child."""

    def __init__(self, worker: Worker, stdout_fd: int, stderr_fd: int) -> None:
        self.worker, self.stdout_fd, self.stderr_fd = worker, stdout_fd, stderr_fd
        self.returncode: int | None = None
        self.ended = False
        self.killed = False

    def _take(self, timeout: float) -> None:
        if self.ended:
            return
        msg = self.worker.receive(timeout)
        if msg is None:
            return
        if msg.get("t") != "exit":
            raise WorkerFailed(f"unexpected message {str(msg)[:100]}")
        self.ended, self.returncode = True, msg.get("status")
        self.worker.tasks = int(msg.get("tasks") or self.worker.tasks)

    def poll(self) -> int | None:
        self._take(0.0)
        return self.returncode if self.ended else None

    def kill(self, grace: bool = False) -> None:
        if grace and not self.ended and not self.killed:
            # Its pipes closed: it is ending on its own; give it a moment, so that its own
            # exit status (not our SIGKILL) is what the result reports. Never when the
            # watchdog or the time budget ends it: a cold child is killed at once then.
            self._take(1.0)
        if not self.ended and not self.killed:
            self.killed = True
            self.worker.send({"t": "kill"})

    def wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.ended and time.monotonic() < deadline:
            self._take(deadline - time.monotonic())
        if not self.ended:
            raise WorkerFailed("the zygote did not end a job it was told to kill")

    def close(self) -> None:
        for fd in (self.stdout_fd, self.stderr_fd):
            try:
                os.close(fd)
            except OSError:
                pass


class Worker:
    """One zygote in one bubblewrap sandbox, for one slot and one set of preloaded modules."""

    def __init__(self, iso: Isolation, limits: Limits, slot: int, preload: tuple[str, ...]):
        self.iso, self.limits, self.slot, self.preload = iso, limits, slot, preload
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.tmp: Path | None = None
        self.cgroup: Path | None = None
        self.tasks = 0

    # -- life --

    def start(self) -> None:
        self.tmp = sandbox.scratch_dir("worker")
        files = {
            "harness.py": sandbox.HARNESS.read_text(encoding="utf-8"),
            "zygote.py": ZYGOTE.read_text(encoding="utf-8"),
        }
        box = sandbox.make_box(self.tmp, self.iso, self.slot, files)
        self.sys_path = box.sys_path
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        exe, _ = common._interpreter()
        argv = [str(exe), "-s", "-S", "-B", f"{box.in_path}/zygote.py", str(theirs.fileno())]
        log = open(self.tmp / "zygote.log", "wb")  # noqa: SIM115 (the zygote's own errors)
        try:
            self.proc, self.cgroup = sandbox.start_in_box(
                box,
                self.iso,
                self.slot,
                argv,
                tasks=self.limits.nproc + 64,
                caps=CAPS,
                pass_fds=(theirs.fileno(),),
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        except sandbox.SandboxError as e:
            self.close()
            raise WorkerUnavailable(str(e)) from e
        finally:
            log.close()
            theirs.close()
        self.sock = ours
        self.send(
            {
                "t": "hello",
                "sys_path": self.sys_path,
                "harness": f"{box.in_path}/harness.py",
                "preload": list(self.preload),
                "codec": sandbox.codec_source(),  # compiled once, before any job is forked
                "probe_limits": _job_limits(self.limits, 60),
            }
        )
        try:
            msg = self.receive(START_TIMEOUT_S)
        except WorkerFailed as e:
            msg, why = None, str(e)
        else:
            why = "no answer" if msg is None else msg.get("why")
        if msg is None or msg.get("t") != "ready":
            detail = self._log_tail()
            self.close()
            raise WorkerUnavailable(f"{why}{': ' + detail if detail else ''}")
        self.tasks = int(msg.get("tasks") or 0)

    def _log_tail(self) -> str:
        try:
            return (self.tmp / "zygote.log").read_text(errors="replace")[-300:].strip()
        except (OSError, TypeError):
            return ""

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self.sock is not None

    def close(self) -> None:
        """End the zygote and its sandbox (every process in it) and remove its folder."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass
            self.proc = None
        resources._release_cgroup(self.cgroup)
        self.cgroup = None
        if self.tmp is not None:
            sandbox.release_scratch(self.tmp)
            self.tmp = None

    # -- messages --

    def send(self, msg: dict, fds: list[int] | None = None) -> None:
        if self.sock is None:
            raise WorkerFailed("the zygote is gone")
        try:
            socket.send_fds(self.sock, [json.dumps(msg).encode()], fds or [])
        except OSError as e:
            raise WorkerFailed(f"cannot reach the zygote: {e}") from e

    def receive(self, timeout: float) -> dict | None:
        """The zygote's next message, or None when none came within ``timeout``."""
        if self.sock is None:
            raise WorkerFailed("the zygote is gone")
        ready, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
        if not ready:
            if self.proc is not None and self.proc.poll() is not None:
                raise WorkerFailed("the zygote's sandbox ended")
            return None
        try:
            data, fds, _flags, _addr = socket.recv_fds(self.sock, 65536, 4)
        except OSError as e:
            raise WorkerFailed(f"cannot read from the zygote: {e}") from e
        for fd in fds:
            os.close(fd)
        if not data:
            raise WorkerFailed("the zygote ended")
        try:
            msg = json.loads(data)
        except ValueError as e:
            raise WorkerFailed("the zygote wrote something that is not a message") from e
        if not isinstance(msg, dict):
            raise WorkerFailed("the zygote wrote something that is not a message")
        return msg

    # -- one job --

    def run(
        self, job: dict, limits: Limits, cpu_seconds: int, budget_left: float | None = None
    ) -> ChildRun:
        """Run one job (as sandbox.run_child would) in a fresh fork of the zygote."""
        body = json.dumps(sandbox.full_job(job, limits, self.sys_path)).encode("utf-8")
        jfd = os.memfd_create("drills-job")
        pipes = [os.pipe() for _ in range(3)]  # records, stdout, stderr
        (rec_r, rec_w), (out_r, out_w), (err_r, err_w) = pipes
        try:
            os.write(jfd, body)
            os.lseek(jfd, 0, os.SEEK_SET)
            if self.cgroup is not None:
                # As much room for the job as a cold child's cgroup leaves it (nproc + 8 for
                # bwrap, its init and the harness): here also the zygote's tasks, C and G.
                (self.cgroup / "pids.max").write_text(str(limits.nproc + self.tasks + 9))
            job_limits = _job_limits(limits, cpu_seconds)
            t0 = time.monotonic()
            self.send({"t": "run", "limits": job_limits}, [jfd, rec_w, out_w, err_w])
        except BaseException:
            for fd in (jfd, rec_r, rec_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            raise
        for fd in (jfd, rec_w, out_w, err_w):
            os.close(fd)
        handle = _JobHandle(self, out_r, err_r)
        try:
            msg = self.receive(30.0)
            if msg is None or msg.get("t") != "started":
                raise WorkerFailed(f"the zygote did not start the job ({msg})")
            run = child._collect(handle, rec_r, limits, t0, True, budget_left)
        except BaseException:
            for fd in (rec_r, out_r, err_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            raise
        return run


class WorkerPool:
    """Warm workers for a batch, with the interface of :func:`sandbox.run_child`.

        with WorkerPool(grader.isolation, grader.limits) as pool:
            sandbox.execute(cells, setup, cases, iso, limits, slot, runner=pool)

    One zygote per slot and set of preloaded modules (01-04 numpy; 05-06 numpy and torch),
    started on first use or by :meth:`prestart`. A slot is used by one thread at a time (as
    sandbox slots are), and only from threads that live until the pool closes: a zygote's
    sandbox ends with the thread that started it.
    """

    def __init__(self, iso: Isolation, limits: Limits, max_per_slot: int = 2) -> None:
        self.iso, self.limits, self.max_per_slot = iso, limits, max_per_slot
        self.unavailable = warm_possible(iso)
        self._workers: dict[int, dict[tuple[str, ...], Worker]] = {}
        self._lock = threading.Lock()
        self._starting: dict[tuple, threading.Lock] = {}  # one start at a time per worker
        self._closing = threading.Event()  # set by close(): no new worker after it
        self.stats = {"warm_jobs": 0, "cold_jobs": 0, "workers_started": 0, "worker_failures": 0}

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _count(self, key: str) -> None:
        with self._lock:
            self.stats[key] += 1

    def _worker(self, slot: int, preload: tuple[str, ...]) -> Worker | None:
        with self._lock:
            key_lock = self._starting.setdefault((slot, preload), threading.Lock())
        with key_lock:  # a job waits for the start prestart() began, rather than start another
            return self._get_or_start(slot, preload)

    def _get_or_start(self, slot: int, preload: tuple[str, ...]) -> Worker | None:
        with self._lock:
            if self.unavailable:
                return None
            mine = self._workers.setdefault(slot, {})
            w = mine.get(preload)
        if w is not None and w.alive:
            return w
        if w is not None:
            w.close()
        w = Worker(self.iso, self.limits, slot, preload)
        try:
            w.start()
        except WorkerUnavailable as e:
            with self._lock:
                self.unavailable = f"the warm worker is unavailable here: {e}"
            return None
        self._count("workers_started")
        if self._closing.is_set():  # closed while this one started (prestart)
            w.close()
            return None
        with self._lock:
            others = [k for k in mine if k != preload]  # the replaced one does not count
            old = others[: max(0, len(others) - self.max_per_slot + 1)]
            evicted = [mine.pop(k) for k in old]
            mine[preload] = w
        for e in evicted:
            e.close()
        return w

    def prestart(self, slots: int, preloads: set[tuple[str, ...]]) -> None:
        """Start the workers a batch will need, in the background: a zygote importing torch
        (a second or more) then starts while the first submissions are graded.

        A sandbox ends with the thread that started it (bwrap --die-with-parent is a
        parent-death signal, and a thread counts as the parent), so each starting thread
        lives until the pool closes."""

        def start_and_stay(slot: int, preload: tuple[str, ...]) -> None:
            self._worker(slot, preload)
            self._closing.wait()

        for preload in sorted(preloads)[: self.max_per_slot]:
            for slot in range(slots):
                t = threading.Thread(target=start_and_stay, args=(slot, preload), daemon=True)
                t.start()

    def run_child(self, job, iso, limits, slot=0, cpu_seconds=600, budget_left=None) -> ChildRun:
        """:func:`sandbox.run_child` (the same arguments), in the slot's warm worker if it can."""
        w = self._worker(slot, preload_for(job.get("setup", [])))
        if w is not None:
            try:
                run = w.run(job, limits, cpu_seconds, budget_left)
                self._count("warm_jobs")
                return run
            except (WorkerFailed, OSError):
                self._count("worker_failures")
                w.close()  # the next job of this slot starts a fresh zygote
        self._count("cold_jobs")
        return sandbox.run_child(job, iso, limits, slot, cpu_seconds, budget_left)

    def close(self) -> None:
        with self._lock:
            workers = [w for mine in self._workers.values() for w in mine.values()]
            self._workers.clear()
            self._closing.set()
        for w in workers:
            w.close()
