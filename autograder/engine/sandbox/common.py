"""What every isolation mode shares: the mode itself (:class:`Isolation`), the errors, and what
the child may see and be given whatever the mode.

- :class:`Isolation`: the mode :func:`modes.detect` chose ("bwrap", "bwrap-noproc" or
  "reduced"), whether children run as their own uids (a root grader), the paths that must stay
  out of view, and the warnings a run reports.
- What the child reads: the interpreter, its prefix and the installed libraries
  (:func:`library_dirs`), never the grader's package nor tiny_model (:func:`_answer_dirs`) nor
  the outcome cache (:func:`_cache_dirs`); bubblewrap binds the first and covers the others,
  the reduced mode relies on file modes for them (reduced.py).
- The child's environment (:func:`_child_env`: scrubbed, one thread per library) and its uid
  (:func:`_child_uid`: one unprivileged uid per slot when the grader is root).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

SANDBOX_IN = "/drills/in"  # where the child finds its harness and job (bubblewrap)
_UID_BASE = 3_000_000  # unprivileged uids used for children when the grader runs as root


class SandboxError(RuntimeError):
    """The sandbox itself could not be set up (not the learner's fault)."""


class SecretExposed(SandboxError):
    """Learner code could read the course secret under this isolation: no grading with it."""


# Bubblewrap's modes: "bwrap", the sandbox with its own /proc; "bwrap-noproc", the same sandbox
# with an empty read-only /proc, where the kernel refuses a new proc mount (a container whose
# /proc the runtime has masked: Kubernetes' procMount Default). modes.detect() picks it only then.
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
    return Path(__file__).resolve().parents[2]  # autograder/, above engine/sandbox/


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


def _bind_sources() -> list[Path]:
    exe, prefix = _interpreter()
    return [exe, prefix, *library_dirs()]


def _answer_dirs() -> list[Path]:
    """Packages learner code must not import: the grader (its case modules) and tiny_model,
    whose reference module holds implementations of graded functions (a `thr_weights` that
    returned `tiny_model.thr.thr_weights(...)`, today tiny_model.reference, took every value
    point).
    No setup cell, case or codec needs either; where one sits inside a bound library folder
    (a wheel install), the sandbox covers it."""
    return [p for p in (grader_dir(), _package_dir("tiny_model")) if p is not None]


def _cache_dirs() -> list[Path]:
    from autograder.scoring import cache

    d = cache.directory()
    return [Path(os.path.realpath(d))] if d is not None else []


# -- the child's environment and uid -----------------------------------------------------------


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
