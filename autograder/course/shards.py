"""`--shard K/N`: which submissions one of N batch jobs grades.

Submission ``s`` belongs to shard ``1 + H(student, assignment) mod N`` (the assignment
as the path or ``--assignment`` names it, else the notebook's file name), with ``H``
a SHA-256 of the pair. The choice depends on that submission only: N jobs given the
same folders split it into N disjoint parts that cover it, in any order, on any
machine, and a submission added later does not move the others to other shards.

Each shard's output folder records, in ``run.json``, the shard, a digest of the whole
list of submissions it was chosen from and the run's fingerprints (grader, course,
secret); `drills merge` (:mod:`autograder.course.merge`) checks them before joining shards.
"""

from __future__ import annotations

import hashlib
import re

from autograder.engine.submission import Submission

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with 1 <= K <= N, or ValueError saying what is wrong."""
    m = _SHARD.match(text or "")
    if not m:
        raise ValueError(f"--shard takes K/N (for example 2/8), not {text!r}")
    k, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"--shard {text}: K must be between 1 and N, N at least 1")
    return k, n


def _name(sub: Submission) -> str:
    return f"{sub.student}\x1f{sub.assignment or sub.path.stem}"


def shard_of(sub: Submission, n: int) -> int:
    """The shard (1..n) of a submission."""
    h = hashlib.sha256(_name(sub).encode("utf-8")).digest()
    return 1 + int.from_bytes(h[:8], "little") % n


def select(subs: list[Submission], k: int, n: int) -> list[Submission]:
    """The submissions of shard ``k`` of ``n``, in their original order."""
    return [s for s in subs if shard_of(s, n) == k]


def inputs_digest(subs: list[Submission]) -> str:
    """A digest of the list every shard chooses from (student, assignment, file name):
    shards of one run must agree on it."""
    names = sorted(f"{_name(s)}\x1f{s.path.name}" for s in subs)
    # surrogateescape: a file name that is not UTF-8 is digested as its own bytes
    return hashlib.sha256("\x1e".join(names).encode("utf-8", "surrogateescape")).hexdigest()
