"""The course secret and the seeds of generated cases.

``seed = H(secret, assignment, case id[, student])``. Without a secret the
public default is used, so anyone can reproduce the public grading; an
instructor sets ``DRILLS_SECRET`` (or passes ``--secret-file``) so the graded
inputs cannot be read from the public repository.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

PUBLIC_DEFAULT_SECRET = "reward-drills-public-default-secret"


def course_secret(secret: str | None = None, secret_file: str | os.PathLike | None = None) -> str:
    """The secret in force: explicit > file > $DRILLS_SECRET > $DRILLS_SECRET_FILE > default."""
    if secret is not None:
        return secret
    if secret_file is not None:
        return _read_secret(Path(secret_file))
    if os.environ.get("DRILLS_SECRET"):
        return os.environ["DRILLS_SECRET"]
    if os.environ.get("DRILLS_SECRET_FILE"):
        return _read_secret(Path(os.environ["DRILLS_SECRET_FILE"]))
    return PUBLIC_DEFAULT_SECRET


def _read_secret(path: Path) -> str:
    text = path.read_text(encoding="utf-8").strip()
    if not text:
        raise ValueError(f"secret file {path} is empty")
    return text


def case_seed(secret: str, assignment: str, case_id: str, student: str | None = None) -> int:
    parts = [secret, assignment, case_id] + ([student] if student else [])
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little")


def case_rng(secret: str, assignment: str, case_id: str, student: str | None = None):
    import numpy as np  # here, not at the top: `import autograder` must stay cheap

    return np.random.default_rng(case_seed(secret, assignment, case_id, student))
