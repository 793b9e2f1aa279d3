"""The course secret and the seeds of generated cases.

``seed = H(secret, assignment, case id[, student])``. Without a secret the
public default is used, so anyone can reproduce the public grading; an
instructor sets ``DRILLS_SECRET`` (or passes ``--secret-file``) so the graded
inputs cannot be read from the public repository.

The student id makes each student's generated inputs their own, so a table of
outputs copied from another student is worthless. Both engines use the same id:
``drills grade`` takes it from the submission's path (``submitted/<student>/...``),
the in-kernel engine from the folder nbgrader autograde runs the kernel in
(``autograded/<student>/<assignment>/``, see :func:`autograde_student`). A
learner's own check (``drills check``, "Check my work") uses none unless given one.
Fixed (canonical) cases ignore the seed, so they are the same for everyone.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
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


# Kept in a student id: letters and digits of any script (with their combining marks:
# ``José``, ``Łukasz``, ``अनिल``, ``王芳``), and these. Everything else (spaces, slashes,
# control and formatting characters, ``~``, which collision rows use) becomes ``_``.
_SAFE_PUNCT = frozenset("._@+-")
MAX_ID_BYTES = 200  # an id is a file name: well under the 255 bytes file systems allow


def student_id(text: str) -> str:
    """A student id as both engines seed with it (and usable as a file name or a CSV cell).
    The name is put in Unicode's composed form (NFC) first: ``josé`` typed with one accented
    letter or with an ``e`` and a combining accent (macOS writes file names so) is one student.
    Letters and digits of every script are kept, so ``josé`` stays ``josé``; at most 100
    characters and MAX_ID_BYTES bytes."""
    s = "".join(
        ch if ch in _SAFE_PUNCT or unicodedata.category(ch)[0] in "LMN" else "_"
        for ch in unicodedata.normalize("NFC", text).strip()[:100]
    )
    while len(s.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
        s = s[:-1]
    return s if s and s not in (".", "..") else "_"


def autograde_student(assignment: str, cwd: str | os.PathLike | None = None) -> str | None:
    """The student nbgrader autograde is grading, read from the kernel's working folder.

    nbgrader executes ``autograded/<student>/<assignment>/<notebook>.ipynb`` with that
    folder as the kernel's working directory. Anywhere else (a learner's own kernel, the
    source notebook, ``drills check``) there is no student: ``None``.
    """
    parts = Path(cwd if cwd is not None else os.getcwd()).resolve().parts
    if len(parts) >= 3 and parts[-3] == "autograded" and parts[-1] == assignment:
        return student_id(parts[-2])
    return None


def secret_digest(secret: str) -> str:
    """A slow, salted digest of the secret: says whether two runs used the same secret
    without helping anyone guess it (stored in output manifests and cache keys)."""
    return hashlib.pbkdf2_hmac(
        "sha256", secret.encode("utf-8"), b"reward-drills secret digest", 200_000
    ).hex()[:32]
