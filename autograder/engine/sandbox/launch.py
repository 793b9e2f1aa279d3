"""The one way a sandbox is set up, for a cold child and a warm worker (worker.py) alike, in
every mode: its folder and job files (:func:`make_box`: ``in``, read-only inside, and
``work``, its ``/tmp``; closed to every other user whatever the umask), the job as the harness
reads it (:func:`full_job`), and its start (:func:`start_in_box`: in bubblewrap, or as the
child's uid, or behind the reduced mode's shim; in a pids cgroup where the uid cannot hold a
process limit).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from autograder.cases import codec
from autograder.engine.sandbox import bubblewrap, common, folders, reduced, resources, seccomp
from autograder.engine.sandbox.common import SANDBOX_IN, Isolation, SandboxError
from autograder.engine.sandbox.resources import Limits

HARNESS = Path(__file__).parent.with_name("child_harness.py")


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
        uid = gid = common._child_uid(slot)
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
    and its cgroup (release it with :func:`resources._release_cgroup`)."""
    extra: tuple[int, ...] = ()
    if iso.bubblewrap:
        sfd = seccomp.seccomp_fd()
        extra = (sfd,) if sfd is not None else ()
        cmd = bubblewrap._bwrap_command(
            iso.bwrap or "bwrap", iso, box.indir, box.workdir, argv, caps=caps, seccomp_fd=sfd
        )
        cwd = str(box.tmp)
    elif iso.drop_uid:
        cmd, cwd = argv, str(box.workdir)
    else:
        # Same uid as the grader and no pid namespace: at least the child's parent is a shim,
        # so that "kill my parent" does not reach the grader.
        exe, _ = common._interpreter()
        cmd, cwd = [str(exe), "-s", "-S", "-c", reduced._SHIM, *argv], str(box.workdir)
    cg = None if iso.drop_uid else resources._pids_cgroup(tasks)
    if cg is not None:
        cmd = resources._in_cgroup(cg, cmd)
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            pass_fds=(*pass_fds, *extra),
            env=common._child_env(),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
            **common._uid_kwargs(iso, slot),
        )
    except OSError as e:
        resources._release_cgroup(cg)
        raise SandboxError(f"cannot start the sandbox: {e}") from e
    finally:
        for fd in extra:
            os.close(fd)
    folders._LIVE_PROCS.add(proc)
    return proc, cg


def child_sys_path(iso: Isolation, indir: Path) -> tuple[list[str], str]:
    """(the child's sys.path additions, where it finds ``indir``): the installed libraries
    only (never tiny_model nor the grader: :func:`common._answer_dirs`)."""
    sys_path = [str(p) for p in common.library_dirs()]
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
