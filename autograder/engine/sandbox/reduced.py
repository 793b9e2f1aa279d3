"""The reduced mode: learner code runs without bubblewrap (``DRILLS_SANDBOX=none``, or where
bubblewrap cannot start: a container whose seccomp profile refuses user namespaces).

What it promises: the limits of resources.py, a scrubbed environment and an empty working
directory; no private filesystem, network or process namespace. So what keeps learner code
from the course is the uid it runs as:

- a root grader whose Python other users can read runs each child as its own unprivileged
  uid; then file modes are the boundary, and a course secret (:func:`secret_exposure`) or the
  answers (:func:`answer_exposure`) that other users can open are refused, naming the path;
- otherwise the child is the grader's own user, who can read everything the grader can: no
  course secret is used, and its parent is a shim (:data:`_SHIM`), so that "kill my parent"
  does not reach the grader.

Without a pid namespace, the uid's other processes count against its process limit
(:func:`_user_tasks`) and are found by that uid when a child is killed (:func:`_kill_uid`).
"""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

from autograder.engine.sandbox import common
from autograder.engine.sandbox.common import Isolation


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
    for path in [*private, *([Path(env_file)] if env_file else []), *common._cache_dirs()]:
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
    for path in [Path(course_root) / "solutions", *common._answer_dirs()]:
        if path.exists() and _others_can_open(path):
            return (
                f"without bubblewrap, learner code runs as a separate uid that can read {path} "
                "(it holds answers: a learner's function could return the reference's value). "
                f"Close it to other users (chmod -R go-rwx {path}), or grade with bubblewrap"
            )
    return None


_SHIM = (
    "import os, sys\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os.execv(sys.argv[1], sys.argv[1:])\n"
    "_, status = os.waitpid(pid, 0)\n"
    "code = os.waitstatus_to_exitcode(status)\n"
    "os._exit(code if code >= 0 else 128 - code)\n"
)


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


def _kill_uid(uid: int) -> None:
    """Without a pid namespace, processes that left the child's group are found by their uid."""
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}").st_uid == uid:
                    os.kill(int(d), signal.SIGKILL)
            except OSError:
                pass
