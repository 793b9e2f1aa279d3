"""The bubblewrap modes: the child in its own user, pid, network, IPC and UTS namespaces.

"bwrap": no network; signals reach only the sandbox; a read-only system (``/usr``, the
interpreter, the library folders, its own read-only ``/proc``); ``/tmp`` and the working
directory bound to the child's own empty folder, and nothing else: not the course folder, the
secret, the grader's package, tiny_model, the outcome cache or the output folder (covered when
they sit inside a bound folder). Kernel keyrings and user namespaces are refused (the filter
of seccomp.py, and ``--disable-userns`` for a cold child).

"bwrap-noproc": the same sandbox where the kernel refuses bubblewrap a new ``/proc`` (a
container's masked ``/proc``, Kubernetes' procMount Default; bubblewrap says
:data:`PROC_REFUSED`), and only there: ``/proc`` is a read-only tmpfs holding only
``cpuinfo``, so nothing of any process is in view. ``--disable-userns`` cannot be used
(``/proc/sys`` is read-only in a container), so the seccomp filter refuses user namespaces and
the mode is not used without it; cold children only (a warm worker's zygote mounts a ``/proc``
per job). :func:`_probe` checks a mode starts, and for "bwrap-noproc" that ``/proc`` lists
nothing else and a user namespace is refused, before :func:`modes.detect` chooses it.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

from autograder.engine.sandbox import common, folders, seccomp
from autograder.engine.sandbox.common import SANDBOX_IN, Isolation, SandboxError

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
    if mode == "bwrap-noproc" and seccomp.seccomp_filter() is None:
        return "no seccomp filter for this machine, which a sandbox without its own /proc needs"
    # its own empty /tmp: bwrap makes the mount points of folders bound below /tmp (an
    # interpreter under /tmp) inside it, which must not land in the real temporary folder
    scratch = folders.scratch_dir("child")
    if iso.drop_uid:  # the probe runs as the children's uid
        os.chown(scratch, common._child_uid(0), common._child_uid(0))
    code = "pass" if mode == "bwrap" else _NOPROC_PROBE
    sfd = seccomp.seccomp_fd() if mode == "bwrap-noproc" else None
    cmd = _bwrap_command(
        bwrap,
        replace(iso, mode=mode),
        Path("/nonexistent-in"),
        scratch,
        [str(common._interpreter()[0]), "-S", "-c", code],
        seccomp_fd=sfd,
    )
    try:
        r = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            env=common._child_env(),
            pass_fds=(sfd,) if sfd is not None else (),
            **common._uid_kwargs(iso, 0),
        )
    except (OSError, subprocess.SubprocessError) as e:
        return str(e)
    finally:
        if sfd is not None:
            os.close(sfd)
        folders.release_scratch(scratch)
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
    ``seccomp_fd`` holds the filter of :func:`seccomp.seccomp_filter`."""
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
    exe, prefix = common._interpreter()
    bound: list[Path] = [Path("/usr")]
    for src in [prefix, exe, *common.library_dirs()]:
        if any(common._inside(src, b) for b in bound):
            continue
        cmd += ["--ro-bind", str(src), str(src)]
        bound.append(src)
    # Anything secret that happens to sit inside a bound folder is covered up (the outcome
    # cache holds generated inputs; the grader's and tiny_model's packages hold answers).
    for h in [*iso.hidden, *common._answer_dirs(), *common._cache_dirs()]:
        if any(common._inside(h, b) for b in bound) and h.exists():
            cmd += ["--tmpfs", str(h)] if h.is_dir() else ["--ro-bind", "/dev/null", str(h)]
    if indir.exists():
        cmd += ["--ro-bind", str(indir), SANDBOX_IN]
    cmd += ["--chdir", "/tmp", "--remount-ro", "/"]
    return cmd + ["--", *argv]
