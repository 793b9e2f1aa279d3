"""Run a command where user namespaces are refused, as in a Docker or containerd container.

    setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin python tests/namespace_less.py CMD...

Docker's default seccomp profile (moby's) and containerd's refuse ``unshare`` and ``clone`` with
``CLONE_NEWUSER`` to a process without CAP_SYS_ADMIN (Gradescope's container, a Kubernetes pod
under ``RuntimeDefault``): bubblewrap cannot start there. (The containers/common profile,
Debian 12's /usr/share/containers/seccomp.json, does not refuse them.) tests/oci_seccomp.py applies a whole OCI profile instead. This launcher installs the same rule as
a seccomp filter (the grader's own ``sandbox.seccomp_filter``: unshare/clone with CLONE_NEWUSER
fail with EPERM, clone3 with ENOSYS), after ``no_new_privs``, and execs CMD; the ``setpriv`` in
front drops CAP_SYS_ADMIN, which a container's root lacks. :func:`command` builds the whole line.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve()


def command(argv: list[str]) -> list[str]:
    """``argv`` run namespace-less (as root: CAP_SYS_ADMIN dropped, the seccomp rule set)."""
    return [
        "setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin",
        sys.executable, str(HERE), *argv,
    ]  # fmt: skip


def command_or_skip(argv: list[str]) -> list[str]:
    """:func:`command`, or the calling test skipped saying why this machine cannot make the
    environment."""
    why = why_not()
    if why:
        import pytest

        pytest.skip(why)
    return command(argv)


def why_not() -> str | None:
    """Why this machine cannot make the environment (None when it can)."""
    if os.geteuid() != 0:
        return "dropping CAP_SYS_ADMIN from a process needs root"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    sys.path.insert(0, str(HERE.parent.parent))
    from autograder.engine import sandbox

    if sandbox.seccomp_filter() is None:
        return "no seccomp filter for this machine's architecture"
    return None


def _install() -> None:
    sys.path.insert(0, str(HERE.parent.parent))
    from autograder.engine import sandbox

    prog = sandbox.seccomp_filter()
    libc = ctypes.CDLL(None, use_errno=True)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(prog, len(prog))
    fprog = SockFprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


if __name__ == "__main__":
    _install()
    os.execvp(sys.argv[1], sys.argv[1:])
