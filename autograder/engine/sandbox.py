"""Running a learner program in a sandboxed child and reading its outcomes back.

The trusted parent never imports learner code. It writes three things into a
fresh temporary folder: the harness (``child_harness.py``), the text of the
trusted ``codec.py`` and a job file (the program's cells, the encoded case
inputs, the limits), then starts ``python harness.py job.json 3``:

- with bubblewrap (``bwrap``): new user, pid, network, ipc and uts namespaces
  (no network; signals reach only the sandbox), a read-only system (``/usr``,
  the interpreter, the library folders, ``/proc``; kernel keyrings refused by a
  seccomp filter), ``/tmp`` and the working directory
  bound to the child's own empty folder, and nothing else: not the course
  folder, the secret, the grader's package or the output folder (masked if they
  sit inside a library folder); where the kernel refuses bubblewrap a new /proc (a
  container's masked /proc) and only there, the same sandbox with a /proc holding only
  cpuinfo ("bwrap-noproc", cold children only: :func:`detect`);
- without it: the same limits, a scrubbed environment and an empty working
  directory, and the result carries the warning that isolation is reduced.

Either way the harness first sets rlimits on itself (CPU seconds, address
space, processes, file size, core dumps), and when the grader runs as root the
child runs as a separate unprivileged uid per worker (so that the process limit
holds and the child cannot signal or write as the grader). A wall-clock watchdog
kills the whole process group when one step (loading a cell or one call) takes
longer than the limit, or when the submission's time budget (all its steps and
restarts together) runs out. :func:`make_box` and :func:`start_in_box` are the
one place a sandbox is set up, for a cold child and a warm worker (worker.py)
alike; the rlimits are set by ``child_harness.limit_self`` in both. Outcomes come back as JSON lines on file descriptor 3,
are validated strictly (:func:`validate_record`), and anything else is a failed
case with a reason, never a crash of the grader.

:func:`execute` runs a whole program: when the child dies, hangs or writes
something invalid in the middle of a function, that case fails with the reason,
the function's remaining cases are not run, and a fresh child continues with the
next function (or skips a cell that killed the program while loading).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import weakref
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder.cases import codec
from autograder.engine import files
from autograder.engine.records import (  # noqa: F401 (ProtocolError, parse_line, validate_*: used as sandbox.X)
    CRASH,
    INVALID,
    NOT_RUN,
    TIMEOUT,
    ProtocolError,
    _expect,
    parse_line,
    validate_outcome,
    validate_value,
)

SANDBOX_IN = "/drills/in"
HARNESS = Path(__file__).with_name("child_harness.py")
_UID_BASE = 3_000_000  # unprivileged uids used for children when the grader runs as root

BUDGET_STEPS = 5  # the default time budget of a submission, in step timeouts
BUDGET_EXHAUSTED = "time budget exhausted"

# Pseudo-exceptions the parent writes into outcomes it had to make up itself.


class SandboxError(RuntimeError):
    """The sandbox itself could not be set up (not the learner's fault)."""


class SecretExposed(SandboxError):
    """Learner code could read the course secret under this isolation: no grading with it."""


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


# Bubblewrap's modes: "bwrap", the sandbox with its own /proc; "bwrap-noproc", the same sandbox
# with an empty read-only /proc, where the kernel refuses a new proc mount (a container whose
# /proc the runtime has masked: Kubernetes' procMount Default). detect() picks it only then.
BWRAP_MODES = ("bwrap", "bwrap-noproc")


@dataclass
class Isolation:
    mode: str  # one of BWRAP_MODES, or "reduced"
    bwrap: str | None = None
    drop_uid: bool = False  # run children as unprivileged uids (grader is root)
    hidden: list[Path] = field(default_factory=list)  # must not be visible in the child
    warnings: list[str] = field(default_factory=list)

    @property
    def bubblewrap(self) -> bool:
        return self.mode in BWRAP_MODES

    @property
    def reduced(self) -> bool:
        return not self.bubblewrap


# -- what the child may see --------------------------------------------------------------------


def library_dirs() -> list[Path]:
    """Folders of installed packages (site-packages) the child may import from, read-only."""
    out: list[Path] = []
    for entry in sys.path:
        p = Path(entry) if entry else None
        if (
            p
            and p.is_dir()
            and p.name in ("site-packages", "dist-packages")
            and p.resolve() not in out
        ):
            out.append(p.resolve())
    return out


def _interpreter() -> tuple[Path, Path]:
    """(the real interpreter binary, its installation prefix)."""
    exe = Path(os.path.realpath(sys.executable))
    return exe, Path(os.path.realpath(sys.base_prefix))


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def grader_dir() -> Path:
    return Path(__file__).resolve().parents[1]  # autograder/, above engine/


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


def _others_can_reach(path: Path) -> bool:
    """Can an unrelated uid traverse to ``path`` and read it (mode bits only)?"""
    try:
        for parent in [*reversed(path.parents)]:
            if not parent.stat().st_mode & stat.S_IXOTH:
                return False
        m = path.stat().st_mode
        return bool(m & stat.S_IROTH) and (not stat.S_ISDIR(m) or bool(m & stat.S_IXOTH))
    except OSError:
        return False


def _others_can_open(path: Path) -> bool:
    """Can an unrelated uid reach ``path`` (mode bits only): read it if a file, list or enter
    it if a folder? A path that does not exist yet counts as its nearest existing folder."""
    path = Path(os.path.realpath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        for parent in path.parents:
            if not parent.stat().st_mode & stat.S_IXOTH:
                return False
        m = path.stat().st_mode
        return (
            bool(m & (stat.S_IROTH | stat.S_IXOTH)) if stat.S_ISDIR(m) else bool(m & stat.S_IROTH)
        )
    except OSError:
        return False


def secret_exposure(iso: Isolation, private: list[Path]) -> str | None:
    """Why learner code could read the course secret, or what is derived from it (the
    generated inputs in the outcome cache, the results), under ``iso``; None when it cannot.

    ``private``: the secret's file and the folders that hold derived values (the output
    folder; $DRILLS_SECRET_FILE and the outcome cache are added here). Under bubblewrap none of them is in the child's
    view (they are not bound, or covered when inside a bound folder) and the grader's
    environment and memory are in another pid namespace. Without bubblewrap a child running
    as the grader's own user can read all of them (the file, /proc/<grader>/environ and
    /proc/<grader>/mem), so no secret may be used; a child running as a separate uid (the
    grader is root) is kept out by file modes, so each of them must be private."""
    if iso.bubblewrap:
        return None
    if not iso.drop_uid:
        return (
            f"without bubblewrap, learner code runs as this grader's own user (uid "
            f"{os.geteuid()}), who can read the secret's file, the grader's environment and "
            "memory, and the outcome cache derived from the secret. Grade with bubblewrap, or "
            "as root with a Python other users can read (children then run as separate "
            "uids), or without a secret"
        )
    env_file = os.environ.get("DRILLS_SECRET_FILE")
    for path in [*private, *([Path(env_file)] if env_file else []), *_cache_dirs()]:
        if _others_can_open(path):
            return (
                f"without bubblewrap, learner code runs as a separate uid that can read {path} "
                "(it, or the folder it will be made in, is open to other users). Make it "
                "private (chmod 600 for the secret's file, chmod 700 for a folder)"
            )
    return None


def answer_exposure(iso: Isolation, course_root: Path) -> str | None:
    """Why learner code could read the answers (the solution notebooks, the grader's case
    modules, tiny_model's reference maths) under ``iso``; None when it cannot.

    Under bubblewrap none of them is in the child's view. A child running as the grader's own
    user can read them all (and :func:`secret_exposure` already refuses a secret there). A
    child running as a separate uid (a root grader) is kept out by file modes only, so each
    must be closed to other users."""
    if iso.bubblewrap or not iso.drop_uid:
        return None
    for path in [Path(course_root) / "solutions", *_answer_dirs()]:
        if path.exists() and _others_can_open(path):
            return (
                f"without bubblewrap, learner code runs as a separate uid that can read {path} "
                "(it holds answers: a learner's function could return the reference's value). "
                f"Close it to other users (chmod -R go-rwx {path}), or grade with bubblewrap"
            )
    return None


def _bind_sources() -> list[Path]:
    exe, prefix = _interpreter()
    return [exe, prefix, *library_dirs()]


def _answer_dirs() -> list[Path]:
    """Packages learner code must not import: the grader (its case modules) and tiny_model,
    whose training code holds reference implementations of 05-07's graded functions (a
    `thr_weights` that returned `tiny_model.thr.thr_weights(...)` took every value point).
    No setup cell, case or codec needs either; where one sits inside a bound library folder
    (a wheel install), the sandbox covers it."""
    return [p for p in (grader_dir(), _package_dir("tiny_model")) if p is not None]


def detect(hidden: list[Path], force_reduced: bool = False) -> Isolation:
    """How children will be isolated on this machine (probes bwrap once)."""
    hidden = [Path(os.path.realpath(h)) for h in hidden]
    sweep_scratch()  # what killed graders left behind
    root = os.geteuid() == 0
    drop = root and all(_others_can_reach(p) for p in _bind_sources())
    if os.environ.get("DRILLS_SANDBOX_UID", "").lower() == "keep":
        drop = False  # tests: exercise the root-child path (held by a pids cgroup where possible)
    iso = Isolation(mode="reduced", drop_uid=drop, hidden=hidden)
    if root and not drop:
        probe = _pids_cgroup(8)
        _release_cgroup(probe)
        if probe is None:
            iso.warnings.append(
                "running as root, and the Python installation is not readable by other users: "
                "the child runs as root (capabilities dropped) and the process limit is not enforced"
            )
    bwrap = shutil.which("bwrap")
    if os.environ.get("DRILLS_SANDBOX", "").lower() in ("none", "reduced", "off"):
        force_reduced = True
    if bwrap and not force_reduced:
        failed = _probe(bwrap, iso, "bwrap")
        if failed is not None and PROC_REFUSED in failed:
            # A container's masked /proc (procMount Default): the kernel refuses any new proc
            # mount. The same sandbox without its own /proc keeps every promise (the child is
            # still in its own pid namespace; nothing of the grader's is in its view), so it
            # is used, after its own probe checks that.
            noproc = _probe(bwrap, iso, "bwrap-noproc")
            if noproc is None:
                iso.mode, iso.bwrap = "bwrap-noproc", bwrap
                iso.warnings.append(NOPROC_WARNING)
            else:
                iso.warnings.append(
                    f"bwrap is installed but failed to start a sandbox: {failed}; nor without "
                    f"its own /proc: {noproc}"
                )
        elif failed is None:
            iso.mode, iso.bwrap = "bwrap", bwrap
        else:
            iso.warnings.append(f"bwrap is installed but failed to start a sandbox: {failed}")
    elif not bwrap and not force_reduced:
        iso.warnings.append("bubblewrap (bwrap) is not installed")
    if iso.reduced:
        iso.warnings.append(
            "isolation is reduced: learner code runs without bubblewrap (no private filesystem, "
            "network or process namespace); only resource limits, a scrubbed environment and an "
            "empty working directory protect this machine. Install bubblewrap (Debian: apt-get "
            "install bubblewrap) to grade untrusted submissions."
        )
    return iso


PROC_REFUSED = "Can't mount proc"  # bubblewrap's words when the kernel refuses it a /proc
NOPROC_WARNING = (
    "bubblewrap cannot mount the sandbox's own /proc here (the kernel refuses a new proc mount "
    "while this container's /proc is masked, as Kubernetes' procMount Default leaves it): "
    'learner code runs in bubblewrap with a /proc that holds only cpuinfo ("bwrap-noproc": '
    "the same namespaces, files and limits, user namespaces refused by the seccomp filter; "
    "nothing of any process in view), and warm "
    "workers are off (each job needs its own /proc)"
)
# The probe of "bwrap-noproc": /proc holds nothing but cpuinfo and a user namespace is
# refused (the seccomp filter stands in for --disable-userns there); exit status 0 only then.
_NOPROC_PROBE = (
    "import ctypes, os, sys\n"
    "c = ctypes.CDLL(None, use_errno=True)\n"
    "bad = set(os.listdir('/proc')) - {'cpuinfo'}\n"
    "sys.exit(1 if bad else 2 if c.unshare(0x10000000) == 0 else 0)"
)


def _probe(bwrap: str, iso: Isolation, mode: str) -> str | None:
    """Start a sandbox of ``mode`` as a child would be started; None when it works, else why
    not (bwrap's own words, or the probe's finding)."""
    if mode == "bwrap-noproc" and seccomp_filter() is None:
        return "no seccomp filter for this machine, which a sandbox without its own /proc needs"
    # its own empty /tmp: bwrap makes the mount points of folders bound below /tmp (an
    # interpreter under /tmp) inside it, which must not land in the real temporary folder
    scratch = scratch_dir("child")
    if iso.drop_uid:  # the probe runs as the children's uid
        os.chown(scratch, _child_uid(0), _child_uid(0))
    code = "pass" if mode == "bwrap" else _NOPROC_PROBE
    sfd = seccomp_fd() if mode == "bwrap-noproc" else None
    cmd = _bwrap_command(
        bwrap,
        replace(iso, mode=mode),
        Path("/nonexistent-in"),
        scratch,
        [str(_interpreter()[0]), "-S", "-c", code],
        seccomp_fd=sfd,
    )
    try:
        r = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            env=_child_env(),
            pass_fds=(sfd,) if sfd is not None else (),
            **_uid_kwargs(iso, 0),
        )
    except (OSError, subprocess.SubprocessError) as e:
        return str(e)
    finally:
        if sfd is not None:
            os.close(sfd)
        release_scratch(scratch)
    if r.returncode == 0:
        return None
    said = r.stderr.decode(errors="replace").strip()[:300]
    if mode == "bwrap-noproc" and not said:
        said = {1: "/proc holds more than cpuinfo", 2: "a user namespace was not refused"}.get(
            r.returncode, f"exit status {r.returncode}"
        )
    return said or f"exit status {r.returncode}"


def _bwrap_command(
    bwrap: str,
    iso: Isolation,
    indir: Path,
    workdir: Path,
    argv: list[str],
    caps: tuple[str, ...] = (),
    seccomp_fd: int | None = None,
) -> list[str]:
    """The bwrap command line. ``caps`` stay with the sandboxed process, inside the sandbox's
    own user namespace (the warm worker needs them to give each child its own namespaces);
    ``seccomp_fd`` holds the filter of :func:`seccomp_filter`."""
    cmd = [bwrap, "--unshare-all", "--unshare-user"]
    noproc = iso.mode == "bwrap-noproc"
    if noproc and seccomp_fd is None:
        raise SandboxError("bwrap-noproc needs the seccomp filter (it refuses user namespaces)")
    if not caps and not noproc:
        # Not for the warm worker: its zygote mounts a /proc per job, which a mount namespace
        # owned by an outer user namespace (what --disable-userns makes) refuses. The seccomp
        # filter refuses user namespaces to both.
        cmd.append("--disable-userns")
    cmd += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    for cap in caps:
        cmd += ["--cap-add", cap]
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    cmd += [
        # bwrap-noproc: an empty /proc but for a copy of /proc/cpuinfo (a bind of that one
        # file: the machine's processors, as the sandbox's own /proc shows them, nothing of
        # any process). Without it torch's CPU detection fails and falls back to its generic
        # kernels, whose results can differ in the last bits from those in "bwrap".
        *(
            ["--tmpfs", "/proc", "--ro-bind-try", "/proc/cpuinfo", "/proc/cpuinfo"]
            if noproc
            else ["--proc", "/proc"]
        ),
        # Read-only: a child running as root (grader is root, no uid to drop to) could
        # otherwise write the host's kernel settings in /proc/sys (core_pattern, ...).
        "--remount-ro",
        "/proc",
        "--dev",
        "/dev",
        # The private /tmp first: binds made after it may lie under /tmp (a venv in a
        # temporary folder) and must not be hidden by it.
        "--bind",
        str(workdir),
        "/tmp",
    ]
    cmd += ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    for etc in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime"):
        if os.path.exists(etc):
            cmd += ["--ro-bind", etc, etc]
    exe, prefix = _interpreter()
    bound: list[Path] = [Path("/usr")]
    for src in [prefix, exe, *library_dirs()]:
        if any(_inside(src, b) for b in bound):
            continue
        cmd += ["--ro-bind", str(src), str(src)]
        bound.append(src)
    # Anything secret that happens to sit inside a bound folder is covered up (the outcome
    # cache holds generated inputs; the grader's and tiny_model's packages hold answers).
    for h in [*iso.hidden, *_answer_dirs(), *_cache_dirs()]:
        if any(_inside(h, b) for b in bound) and h.exists():
            cmd += ["--tmpfs", str(h)] if h.is_dir() else ["--ro-bind", "/dev/null", str(h)]
    if indir.exists():
        cmd += ["--ro-bind", str(indir), SANDBOX_IN]
    cmd += ["--chdir", "/tmp", "--remount-ro", "/"]
    return cmd + ["--", *argv]


def _cache_dirs() -> list[Path]:
    from autograder.scoring import cache

    d = cache.directory()
    return [Path(os.path.realpath(d))] if d is not None else []


def _child_env() -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        "NBGRADER_EXECUTION": "autograde",
    }


def _child_uid(slot: int) -> int:
    return _UID_BASE + (os.getpid() % 4096) * 64 + slot % 64


def _uid_kwargs(iso: Isolation, slot: int) -> dict:
    if not iso.drop_uid:
        return {}
    uid = _child_uid(slot)
    return {"user": uid, "group": uid, "extra_groups": []}


def _user_tasks(uid: int) -> int:
    """Processes and threads this uid runs now (RLIMIT_NPROC counts them all)."""
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}").st_uid == uid:
                    n += len(os.listdir(f"/proc/{d}/task"))
            except OSError:
                pass
    return n


# -- one child ---------------------------------------------------------------------------------


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


def codec_source() -> str:
    """The trusted codec's text, made standalone for the child (it cannot import autograder)."""
    text = Path(codec.__file__).read_text(encoding="utf-8")
    line = "from autograder.cases.spec import Fn, Obj\n"
    if line not in text:
        raise SandboxError("autograder/cases/codec.py changed: cannot build the child's codec")
    stand_in = (
        "class Fn:  # stand-in: the child only ever sees the encoded form of input functions\n"
        "    pass\n\n\nclass Obj:  # stand-in, as Fn\n    pass\n"
    )
    return text.replace(line, stand_in)


_SHIM = (
    "import os, sys\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os.execv(sys.argv[1], sys.argv[1:])\n"
    "_, status = os.waitpid(pid, 0)\n"
    "code = os.waitstatus_to_exitcode(status)\n"
    "os._exit(code if code >= 0 else 128 - code)\n"
)


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
    tmp = scratch_dir("child")
    try:
        return _run_in(tmp, job, iso, limits, slot, cpu_seconds, budget_left)
    finally:
        release_scratch(tmp)


# -- the one way a sandbox is set up: cold children and warm workers ---------------------------

_SCRATCH = re.compile(r"^drills-(child|worker)-(\d+)-")
_SCRATCH_MIN_AGE_S = 60.0


_LIVE_SCRATCH: set[Path] = set()  # this process's sandbox folders, until released
_LIVE_PROCS: weakref.WeakSet = weakref.WeakSet()  # the sandboxes this process started
_ENDING = False  # set by end_on_sigterm: no new sandbox folder from then on


def scratch_dir(kind: str) -> Path:
    """A fresh folder for one sandbox (``kind``: child or worker), named with this grader's
    pid, so that one left behind by a grader that was killed (a cancelled Slurm task gets
    SIGKILL once its grace ends) is found and removed by the next grader (sweep_scratch).
    Remove it with :func:`release_scratch`."""
    while _ENDING:  # SIGTERM: this process ends within seconds; start nothing, report nothing
        time.sleep(1)
    path = Path(tempfile.mkdtemp(prefix=f"drills-{kind}-{os.getpid()}-"))
    _LIVE_SCRATCH.add(path)
    if _ENDING:  # SIGTERM came between the check and the folder: take it back, then wait
        files.remove_tree(path)
        while True:
            time.sleep(1)
    return path


def release_scratch(path: Path) -> None:
    files.remove_tree(path)
    _LIVE_SCRATCH.discard(path)


def end_on_sigterm(signum: int, _frame) -> None:
    """A SIGTERM handler for a grading process (Slurm's scancel or time limit, a pod being
    stopped): end the sandboxes, remove this process's sandbox folders and end at once, as a
    SIGKILL would (every result already stored is kept; a rerun resumes).

    The sandboxes are killed first, and the folders removed until none is left (up to 5 s):
    a sandbox still writing into its folder, or another thread creating one, would otherwise
    leave a folder behind (bubblewrap's --die-with-parent ends them only after we exit)."""
    global _ENDING
    _ENDING = True
    for proc in list(_LIVE_PROCS):
        if proc.returncode is None:  # not reaped: its pid is still its own
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
    deadline = time.monotonic() + 5.0
    tmp, pid = Path(tempfile.gettempdir()), os.getpid()

    def left() -> list[Path]:  # also a folder another thread made but has not listed yet
        made = [*tmp.glob(f"drills-child-{pid}-*"), *tmp.glob(f"drills-worker-{pid}-*")]
        return [*(p for p in list(_LIVE_SCRATCH) if p.exists()), *made]

    while True:
        for path in left():
            files.remove_tree(path)
        if not left() or time.monotonic() > deadline:
            break
        time.sleep(0.02)  # a sandbox still exiting, or a folder made meanwhile: look again
    os._exit(128 + signum)


def sweep_scratch(folder: Path | None = None) -> list[Path]:
    """Remove the sandbox folders that graders which have ended left in ``folder`` (the
    temporary folder): only this user's, only those whose grader's pid is gone and that have
    not changed for a minute. Returns what was removed."""
    folder = Path(folder or tempfile.gettempdir())
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        m = _SCRATCH.match(entry.name)
        if not m or int(m[2]) == os.getpid():
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
                continue
            if now - st.st_mtime < _SCRATCH_MIN_AGE_S:
                continue
            os.kill(int(m[2]), 0)
            continue  # its grader still runs
        except ProcessLookupError:
            pass
        except OSError:
            continue  # not ours to judge (PermissionError: another user's live process)
        files.remove_tree(entry.path)
        if not os.path.exists(entry.path):
            removed.append(Path(entry.path))
    return removed


@dataclass
class Box:
    """A sandbox's folder on the host: ``in`` (read-only inside, at ``in_path``: the harness,
    the job) and ``work`` (its /tmp and working directory)."""

    tmp: Path
    indir: Path
    workdir: Path
    in_path: str
    sys_path: list[str]  # what the child adds to sys.path
    gid: int | None = None  # the child's own group when it runs as another uid, else None

    def put(self, name: str, text: str) -> None:
        """Write ``name`` into ``in``, readable by the grader and the child only (the job
        holds the learner's code and the generated inputs): created with that mode, not
        chmod-ed after, so no umask and no moment leaves it readable by anyone else."""
        path = self.indir / name
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o600)
        try:
            if self.gid is not None:
                os.fchown(fd, -1, self.gid)
            os.fchmod(fd, 0o600 if self.gid is None else 0o640)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                fd = -1
                f.write(text)
        finally:
            if fd >= 0:
                os.close(fd)


def make_box(tmp: Path, iso: Isolation, slot: int, files: dict[str, str]) -> Box:
    """``in`` and ``work`` under ``tmp``: ``work`` the child's own, ``in`` readable by the
    child, ``files`` written into it; nothing of either is reachable by any other user (another
    student's child, another user of the machine polling the temporary folder) whatever the
    umask. When the grader is root and the child runs as its own uid, ``tmp`` and ``in``
    belong to that uid's group (0710 and 0750, files 0640), ``work`` to the uid (0700);
    otherwise the child is the grader's own user and everything is 0700/0600."""
    indir, workdir = tmp / "in", tmp / "work"
    indir.mkdir(mode=0o700)
    workdir.mkdir(mode=0o700)
    gid = None
    if iso.drop_uid:
        uid = gid = _child_uid(slot)
        os.chown(tmp, -1, gid)
        os.chown(indir, -1, gid)
        os.chown(workdir, uid, uid)
    os.chmod(tmp, 0o700 if gid is None else 0o710)
    os.chmod(workdir, 0o700)
    os.chmod(indir, 0o700 if gid is None else 0o750)
    sys_path, in_path = child_sys_path(iso, indir)
    box = Box(tmp, indir, workdir, in_path, sys_path, gid)
    for name, text in files.items():
        box.put(name, text)
    return box


def start_in_box(
    box: Box,
    iso: Isolation,
    slot: int,
    argv: list[str],
    *,
    tasks: int,
    caps: tuple[str, ...] = (),
    pass_fds: tuple[int, ...] = (),
    stdout=subprocess.PIPE,
    stderr=subprocess.PIPE,
) -> tuple[subprocess.Popen, Path | None]:
    """Start ``argv`` in the sandbox (bubblewrap, or the reduced isolation), as the child's
    uid, in a pids cgroup of ``tasks`` where the uid cannot hold a process limit: the one
    place where both a cold child and a warm worker's zygote are started. Returns the process
    and its cgroup (release it with :func:`_release_cgroup`)."""
    extra: tuple[int, ...] = ()
    if iso.bubblewrap:
        sfd = seccomp_fd()
        extra = (sfd,) if sfd is not None else ()
        cmd = _bwrap_command(
            iso.bwrap or "bwrap", iso, box.indir, box.workdir, argv, caps=caps, seccomp_fd=sfd
        )
        cwd = str(box.tmp)
    elif iso.drop_uid:
        cmd, cwd = argv, str(box.workdir)
    else:
        # Same uid as the grader and no pid namespace: at least the child's parent is a shim,
        # so that "kill my parent" does not reach the grader.
        exe, _ = _interpreter()
        cmd, cwd = [str(exe), "-s", "-S", "-c", _SHIM, *argv], str(box.workdir)
    cg = None if iso.drop_uid else _pids_cgroup(tasks)
    if cg is not None:
        cmd = _in_cgroup(cg, cmd)
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            pass_fds=(*pass_fds, *extra),
            env=_child_env(),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
            **_uid_kwargs(iso, slot),
        )
    except OSError as e:
        _release_cgroup(cg)
        raise SandboxError(f"cannot start the sandbox: {e}") from e
    finally:
        for fd in extra:
            os.close(fd)
    _LIVE_PROCS.add(proc)
    return proc, cg


def _run_in(
    tmp: Path,
    job: dict,
    iso: Isolation,
    limits: Limits,
    slot: int,
    cpu_seconds: int,
    budget_left: float | None = None,
) -> ChildRun:
    box = make_box(tmp, iso, slot, {"harness.py": HARNESS.read_text(encoding="utf-8")})
    uid = _child_uid(slot) if iso.drop_uid else None
    nproc = limits.nproc + (0 if iso.bubblewrap else _user_tasks(uid or os.geteuid()))
    box.put("job.json", json.dumps(full_job(job, limits, box.sys_path)))
    exe, _ = _interpreter()
    r, w = os.pipe()  # the outcome channel; the child keeps the same descriptor number
    own = json.dumps(child_limits(limits, cpu_seconds, nproc))
    argv = [str(exe), "-s", "-S", "-B", f"{box.in_path}/harness.py", f"{box.in_path}/job.json"]
    t0 = time.monotonic()
    try:
        proc, cg = start_in_box(
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
        _release_cgroup(cg)


def child_sys_path(iso: Isolation, indir: Path) -> tuple[list[str], str]:
    """(the child's sys.path additions, where it finds ``indir``): the installed libraries
    only (never tiny_model nor the grader: :func:`_answer_dirs`)."""
    sys_path = [str(p) for p in library_dirs()]
    return sys_path, SANDBOX_IN if iso.bubblewrap else str(indir)


def full_job(job: dict, limits: Limits, sys_path: list[str]) -> dict:
    """A job as the harness reads it: the program and plan, plus the limits and the codec."""
    return dict(
        job,
        sys_path=sys_path,
        max_line=limits.max_line,
        output_chars=limits.output_chars,
        case_timeout=limits.timeout,
        codec=codec_source(),
    )


# -- the seccomp filter ------------------------------------------------------------------------

# Kernel keyrings belong to a uid, not to a process: a key added by one child could be read by
# a later child with the same uid. No grading needs them, so every child is refused them.
# User namespaces are refused too: a process in a new one holds every capability there. A cold
# child also has bwrap's --disable-userns; a warm worker cannot (its zygote must mount each
# job's own /proc, which the nested user namespace of --disable-userns forbids), so for its
# jobs this filter is what refuses them.
_SYSCALLS = {  # machine: AUDIT_ARCH_*, (add_key, request_key, keyctl), unshare, clone, clone3
    "x86_64": (0xC000003E, (248, 249, 250), 272, 56, 435),
    "aarch64": (0xC00000B7, (217, 218, 219), 97, 220, 435),
}
CLONE_NEWUSER = 0x10000000


def seccomp_filter() -> bytes | None:
    """A classic-BPF seccomp program for bwrap's --seccomp: keyring calls, calls from a foreign
    ABI (e.g. 32-bit entry on x86_64) and unshare/clone with CLONE_NEWUSER fail with EPERM;
    clone3 (whose flags a filter cannot read) fails with ENOSYS, so that the C library falls
    back to clone. None on other machines."""
    import platform
    import struct

    arch = _SYSCALLS.get(platform.machine())
    if arch is None:
        return None
    audit, keyring, unshare, clone, clone3 = arch
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    nosys = 0x00050000 | 38  # SECCOMP_RET_ERRNO | ENOSYS
    # (code, jump-if-true label, jump-if-false label, k); labels are resolved below
    prog: list[tuple[int, str | int, str | int, int]] = [
        (ld, 0, 0, 4),  # seccomp_data.arch
        (jeq, 0, "deny", audit),  # native ABI: go on
        (ld, 0, 0, 0),  # seccomp_data.nr
        (jge, "deny", 0, 0x40000000),  # x32 system calls (bit 30)
        *[(jeq, "deny", 0, nr) for nr in keyring],
        (jeq, "nosys", 0, clone3),
        (jeq, "flags", 0, unshare),
        (jeq, "flags", "allow", clone),
        ("flags", 0, 0, 0),
        (ld, 0, 0, 16),  # seccomp_data.args[0], low 32 bits (little-endian machines only)
        (jset, "deny", "allow", CLONE_NEWUSER),
        ("allow", 0, 0, 0),
        (ret, 0, 0, allow),
        ("deny", 0, 0, 0),
        (ret, 0, 0, deny),
        ("nosys", 0, 0, 0),
        (ret, 0, 0, nosys),
    ]
    labels, code = {}, []
    for ins in prog:
        if isinstance(ins[0], str):
            labels[ins[0]] = len(code)
        else:
            code.append(ins)
    out = b""
    for i, (op, jt, jf, k) in enumerate(code):
        jt, jf = (labels[j] - i - 1 if isinstance(j, str) else j for j in (jt, jf))
        out += struct.pack("=HBBI", op, jt, jf, k)
    return out


def seccomp_fd() -> int | None:
    """A file descriptor holding :func:`seccomp_filter` (bwrap reads it), or None."""
    prog = seccomp_filter()
    if prog is None:
        return None
    fd = os.memfd_create("drills-seccomp")
    os.write(fd, prog)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


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


def _kill(proc: subprocess.Popen, iso: Isolation, uid: int | None) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if not iso.bubblewrap and uid is not None:
        # Without a pid namespace, processes that left the group are found by their uid.
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    if os.stat(f"/proc/{d}").st_uid == uid:
                        os.kill(int(d), signal.SIGKILL)
                except OSError:
                    pass


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


# -- a whole program, with restarts ------------------------------------------------------------


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
    batches). By default each child is a fresh interpreter (:func:`run_child`).

    All the children of one submission share its time budget (``limits.submission_budget``
    seconds of wall-clock time, each child's counted from its first record, after its
    start-up and the trusted setup: ChildRun.charged): when it runs out the running case
    fails and every case not yet run fails "time budget exhausted", warm or cold alike. A
    child's start-up is bounded by the step timeout, and their number by ``max_runs``.
    """
    start_child = runner.run_child if runner is not None else run_child
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
