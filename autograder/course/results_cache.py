"""The results cache of `drills grade`: what makes a killed run resumable.

Each graded submission is stored at once, atomically, as one JSON file under
``OUT/.drills-cache/<k[:2]>/<k>.json``, where ``k`` hashes everything the result
depends on:

    the submission     its bytes, path, student id, the assignment named by its
                       path or --assignment, nbgrader's timestamp.txt, discovery warnings
    the course         every source notebook (solutions/) and the grader's own code
                       (autograder/**/*.py, the case modules included) and version
    the secret         as :func:`seeds.secret_digest` (the secret itself is never stored)
    the run            limits, isolation mode (warm, cold or reduced: Grader.run_mode),
                       numpy/torch/python versions

A run started again with the same arguments finds the results of the first and
grades only what is missing; anything that changes a result changes the key.
An entry that cannot be read, is not JSON or does not carry its own key is
treated as missing (regraded). ``--force`` ignores the cache. One run at a time
may use an output folder (an advisory lock, released by the kernel even on SIGKILL).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from autograder.cases import seeds
from autograder.course import report
from autograder.engine import files, submission
from autograder.engine.submission import Submission
from autograder.notebooks import notebook

FORMAT = "drills-result/1"
CACHE_DIR = ".drills-cache"


class CacheBusy(RuntimeError):
    """Another `drills grade` is writing into the same output folder."""


def _sha(parts: list[bytes]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()


def grader_digest() -> str:
    """The grader's code: every .py file of the autograder package, and its version."""
    pkg = Path(__file__).resolve().parents[1]  # autograder/, above course/
    parts = [_version("reward-drills").encode()]
    for p in sorted(pkg.rglob("*.py")):
        parts += [str(p.relative_to(pkg)).encode(), p.read_bytes()]
    return _sha(parts)


def course_digest(root: Path) -> str:
    """Every source notebook of the course (the reference solutions and the points)."""
    parts = []
    for a in notebook.available_assignments(root):
        parts += [a.encode(), notebook.source_path(a, root).read_bytes()]
    return _sha(parts)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "none"


def library_versions() -> dict[str, str]:
    return {
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "torch": _version("torch"),
    }


@dataclass(frozen=True)
class Fingerprint:
    """What every result of one run depends on besides the submission itself."""

    grader: str
    course: str
    secret: str
    run: str  # limits, isolation, library versions (as one JSON text)

    def to_json(self) -> dict[str, str]:
        return {"grader": self.grader, "course": self.course, "secret": self.secret}


def fingerprint(root: Path, secret: str, limits: dict[str, Any], isolation: str) -> Fingerprint:
    run = json.dumps(
        {"limits": limits, "isolation": isolation, "libraries": library_versions()},
        sort_keys=True,
    )
    return Fingerprint(grader_digest(), course_digest(root), seeds.secret_digest(secret), run)


class ResultsCache:
    """Results of one output folder, keyed by :meth:`key`."""

    def __init__(self, out: Path, fp: Fingerprint) -> None:
        self.dir = Path(out) / CACHE_DIR
        self.fp = fp
        self._lock_fd: int | None = None
        self.corrupt = 0  # entries found unreadable (and regraded) in this run

    # -- one writer per folder --

    def lock(self) -> None:
        """Take the folder's lock, or CacheBusy; also removes temp files a killed run left."""
        # entries hold generated inputs and values: the folder is 0700 whatever the umask, as
        # is the output folder when this run creates it
        self.dir.parent.parent.mkdir(parents=True, exist_ok=True)
        self.dir.parent.mkdir(exist_ok=True, mode=0o700)
        report.private_dir(self.dir)
        fd = os.open(self.dir / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise CacheBusy(
                f"another `drills grade` is writing into {self.dir.parent}; wait for it to end"
            ) from None
        self._lock_fd = fd
        report.remove_stale_temp_files(self.dir.parent)

    def unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- keys and entries --

    def key(self, sub: Submission) -> str | None:
        """The key of a submission's result, or None when its file cannot be read."""
        if sub.error:
            return None
        try:  # as the grader reads it: no link followed, never more than the limit (files.py)
            data = files.read_regular(sub.path, submission.MAX_NOTEBOOK_BYTES)
        except files.Refused:
            return None
        facts = json.dumps(
            [str(sub.path), sub.student, sub.assignment, sub.timestamp, sub.warnings],
            ensure_ascii=False,
        )
        return _sha(
            [
                FORMAT.encode(),
                self.fp.grader.encode(),
                self.fp.course.encode(),
                self.fp.secret.encode(),
                self.fp.run.encode(),
                facts.encode("utf-8"),
                data,
            ]
        )

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def load(self, key: str) -> dict[str, Any] | None:
        """The entry stored under ``key``, or None if absent or unusable (counted as corrupt)."""
        p = self._path(key)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError):
            self.corrupt += 1
            return None
        try:
            entry = json.loads(text)
            ok = (
                isinstance(entry, dict)
                and entry.get("format") == FORMAT
                and entry.get("key") == key
                and isinstance(entry.get("result"), dict)
                and isinstance(entry["result"].get("functions"), list)
                and isinstance(entry.get("max_score_known"), bool)
            )
        except ValueError:
            ok = False
        if not ok:
            self.corrupt += 1
            return None
        return entry

    def store(self, key: str, result: report.SubmissionResult, max_score_known: bool) -> None:
        """Store a result (atomically: a killed run leaves the old entry or the new one)."""
        entry = {
            "format": FORMAT,
            "key": key,
            "max_score_known": max_score_known,
            "result": result.to_json(show_hidden=True),
        }
        report.private_dir(self._path(key).parent)
        report.write_atomic(
            self._path(key),
            json.dumps(entry, ensure_ascii=False, allow_nan=False) + "\n",
            private=True,
        )


def entry_count(out: Path) -> int:
    """Result entries in ``out``'s cache (for tests and progress reports)."""
    return sum(1 for _ in (Path(out) / CACHE_DIR).glob("??/*.json"))
