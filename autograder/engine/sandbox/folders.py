"""Sandbox folders on the host, in every mode: made (:func:`scratch_dir`), removed
(:func:`release_scratch`, without recursion: ``files.remove_tree``), swept when a killed
grader left them (:func:`sweep_scratch`), and removed with the sandboxes on SIGTERM
(:func:`end_on_sigterm`).
"""

from __future__ import annotations

import os
import re
import signal
import stat
import tempfile
import time
import weakref
from pathlib import Path

from autograder.engine import files

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
