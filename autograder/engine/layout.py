"""Finding submissions: one layout rule, no link followed, every folder accounted for.

The rule (docs/instructors.md, "Collect"). A path given to ``drills grade`` is a notebook, or a
folder R (R's ``submitted/`` when it has one) laid out as

    R/<student>/<assignment>/<notebook>.ipynb      nbgrader's layout
    R/<student>/<notebook>.ipynb                   a student's notebooks side by side
    R/<notebook>.ipynb                             a lone notebook: the student is its name

A student is named only by a folder directly under R; nothing deeper names anyone. So
``R/mallory/bob/01_exact_kl/x.ipynb`` is not bob's (nor anyone's): it is reported on mallory's
row, and ``R/0mallory/carol/...`` cannot stand in for carol's own notebook. A folder directly
under R named after an assignment (``R/01_exact_kl/``) is that assignment of the student R
itself (a single student's folder was given: ``submitted/alice``).

Nothing is followed: a symbolic link where a student folder, an assignment folder or a notebook
is expected is an error row naming it; a ``timestamp.txt`` that is a link is not read (a
warning). Every folder under R gives a row or a named warning: dot folders and odd names are
students like any other (their ids made safe, with a warning); only Jupyter's own
``.ipynb_checkpoints`` copies are skipped. A student folder with no notebook is an error row.

Student ids are the folder names made safe (:func:`submission.safe_id`, composed Unicode
first). Two different folder names that become one id (``ann lee`` and ``ann_lee``, or ``josé``
typed two ways) are never merged: each folder gets its own error row, under its id with a
suffix that tells them apart, naming every such folder (:func:`_collisions`).
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from pathlib import Path

from autograder.engine import files
from autograder.engine.submission import Submission, safe_id
from autograder.notebooks import notebook

CHECKPOINTS = ".ipynb_checkpoints"  # Jupyter's autosave copies: never a submission
TIMESTAMP = "timestamp.txt"
TIMESTAMP_LIMIT = 1000
LINK = (
    "is a symbolic link; links are not followed (a submission is what is inside its own "
    "folder): copy the file or folder itself there"
)


def _entries(folder: Path) -> list[tuple[str, Path, str]]:
    """``(name, path, kind)`` of each entry of ``folder``, sorted; kind is "link", "dir",
    "file" or "other" (a pipe, a device, a socket), as the entry itself is (no link followed)."""
    out = []
    with os.scandir(folder) as it:
        for e in it:
            try:
                if e.is_symlink():
                    kind = "link"
                elif e.is_dir(follow_symlinks=False):
                    kind = "dir"
                elif e.is_file(follow_symlinks=False):
                    kind = "file"
                else:
                    kind = "other"
            except OSError:
                kind = "other"
            out.append((e.name, Path(e.path), kind))
    return sorted(out)


def _is_notebook(name: str) -> bool:
    return name.endswith(".ipynb")


def _holds_notebooks(folder: Path) -> list[Path]:
    """Notebooks anywhere under ``folder`` (links not followed, checkpoints left out)."""
    found = []
    for top, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != CHECKPOINTS)
        found += [Path(top) / n for n in sorted(names) if _is_notebook(n)]
        if len(found) >= 3:
            break
    return found


def _sub(path: Path, name: str, assignment: str | None, forced: str | None) -> Submission:
    sub = Submission(
        path=path, student=safe_id(name), assignment=forced or assignment, given_id=name
    )
    if sub.student != name:
        sub.warnings.append(
            f"student id {name!r} was changed to {sub.student!r} (unusual characters)"
        )
    return sub


def _error(path: Path, name: str, assignment: str | None, forced: str | None, why: str):
    sub = _sub(path, name, assignment, forced)
    sub.error = why
    return sub


def _timestamp(folder: Path, sub: Submission) -> None:
    """nbgrader's timestamp.txt beside the notebook, read as a submission file is (files.py)."""
    p = folder / TIMESTAMP
    if not os.path.lexists(p):
        return
    try:
        text = files.read_regular(p, TIMESTAMP_LIMIT).decode("utf-8", errors="replace")
    except files.Refused as e:
        sub.warnings.append(f"{p} was not read: {e}")
        return
    sub.timestamp = text.strip().replace(",", " ")[:64]


def _notebook(path: Path, kind: str, name: str, assignment, forced) -> Submission:
    """The submission of the notebook entry ``path`` (student ``name``), or its error row."""
    if kind == "link":
        return _error(path, name, assignment, forced, f"{path} {LINK}")
    if kind != "file":
        return _error(path, name, assignment, forced, f"{path} is not a regular file")
    sub = _sub(path, name, assignment, forced)
    _timestamp(path.parent, sub)
    return sub


def _assignment_folder(
    folder: Path, student: str, assignment: str | None, known: set[str], forced: str | None
) -> tuple[list[Submission], list[str]]:
    """``<student>/<folder>/``: its submissions, and notes for the student's rows."""
    entries = _entries(folder)
    nbs = [(n, p, k) for n, p, k in entries if _is_notebook(n) and k != "dir"]
    deeper = [
        nb for n, p, k in entries if k == "dir" and n != CHECKPOINTS for nb in _holds_notebooks(p)
    ]
    linked = [str(p) for n, p, k in entries if k == "link" and not _is_notebook(n)]
    notes = []
    if deeper:
        notes.append(
            f"notebooks deeper than <student>/<assignment>/ are not graded, for this student "
            f"or anyone: {', '.join(str(p) for p in deeper[:3])}"
            + (" and more" if len(deeper) > 3 else "")
        )
    if linked:
        notes.append(f"links are not followed: {', '.join(linked[:3])}")
    if assignment is not None:
        named = [e for e in nbs if e[0] == f"{assignment}.ipynb"]
        chosen = named or (nbs if len(nbs) == 1 else [])
        if chosen:
            n, p, k = chosen[0]
            sub = _notebook(p, k, student, assignment, forced)
            others = [str(q) for m, q, _ in nbs if q != p]
            if others:
                sub.warnings.append(
                    f"other notebooks in {folder} were not graded: {', '.join(others)}"
                )
            return [sub], notes
        if nbs:
            why = f"{folder} holds {len(nbs)} notebooks and none is named {assignment}.ipynb"
        else:
            why = f"{folder} holds no notebook" + (f" ({notes[0]})" if notes else "")
        return [_error(folder / f"{assignment}.ipynb", student, assignment, forced, why)], []
    # A folder not named after an assignment: each notebook in it is the student's, its
    # assignment told by its name or its cells.
    subs = [_notebook(p, k, student, Path(n).stem if Path(n).stem in known else None, forced)
            for n, p, k in nbs]  # fmt: skip
    return subs, notes


def _student_folder(
    folder: Path, student: str, known: set[str], forced: str | None
) -> list[Submission]:
    """``R/<student>/``: every submission in it, or an error row; never another student's."""
    try:
        entries = _entries(folder)
    except OSError as e:
        return [_error(folder, student, None, forced, f"cannot read {folder}: {e.strerror or e}")]
    subs: list[Submission] = []
    notes: list[str] = []
    for n, p, k in entries:
        stem = Path(n).stem
        if _is_notebook(n):
            subs.append(_notebook(p, k, student, stem if stem in known else None, forced))
        elif k == "link":
            a = n if n in known else None
            subs.append(_error(p / f"{n}.ipynb" if a else p, student, a, forced, f"{p} {LINK}"))
        elif k == "dir" and n != CHECKPOINTS:
            try:
                found, more = _assignment_folder(
                    p, student, n if n in known else None, known, forced
                )
            except OSError as e:
                found, more = [], [f"cannot read {p}: {e.strerror or e}"]
            subs += found
            notes += more
            if not found and not more:
                notes.append(f"{p} holds no notebook")
    if not subs:
        why = f"no notebook was found in {folder}" + (f": {'; '.join(notes)}" if notes else "")
        return [_error(folder, student, None, forced, why)]
    for sub in subs:
        sub.warnings += notes
    return subs


def _root(root: Path, known: set[str], forced: str | None) -> list[Submission]:
    found: list[Submission] = []
    for n, p, k in _entries(root):
        stem = Path(n).stem
        if _is_notebook(n):
            # a lone notebook is its own student; one named after an assignment is the
            # given folder's (exercises/01_exact_kl, submitted/alice)
            name, a = (root.name, stem) if stem in known else (stem, None)
            found.append(_notebook(p, k, name, a, forced))
        elif k == "link":
            found.append(_error(p, n, None, forced, f"{p} {LINK}"))
        elif k == "dir" and n in known:
            subs, notes = _assignment_folder(p, root.name, n, known, forced)
            for sub in subs:
                sub.warnings += notes
            found += subs
        elif k == "dir" and n != CHECKPOINTS:
            found += _student_folder(p, n, known, forced)
    return found


def _given_file(nb: Path, known: set[str], forced: str | None) -> Submission:
    """A notebook named on the command line: the instructor chose it, so its path may name
    its student as nbgrader's layout does (``.../<student>/<assignment>/<file>``)."""
    parts = nb.parts
    student, assignment = None, None
    if "submitted" in parts[:-1]:
        i = len(parts) - 1 - parts[::-1].index("submitted")
        rest = parts[i + 1 :]
        if len(rest) == 3:
            student, assignment = rest[0], rest[1]
        elif len(rest) == 2:
            student = rest[0]
            assignment = nb.stem if nb.stem in known else None
    if student is None and len(parts) >= 3 and parts[-2] in known:
        student, assignment = parts[-3], parts[-2]
    if student is None and nb.stem in known and len(parts) >= 2:
        student, assignment = parts[-2], nb.stem
    if student is None:
        student = nb.stem
    kind = "link" if nb.is_symlink() else "file"
    return _notebook(nb, kind, student, assignment, forced)


def discover(
    paths: list[str | Path], assignment: str | None = None, known: set[str] | None = None
) -> list[Submission]:
    """Submissions named by ``paths`` (notebooks or folders), in a stable order (see the module).

    The same student and assignment twice (one folder under two given paths): the first is
    graded, the second becomes a warning on it.
    """
    known = set(known if known is not None else notebook.ASSIGNMENTS)
    found: list[Submission] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file() or (p.is_symlink() and _is_notebook(p.name)):
            found.append(_given_file(p, known, assignment))
            continue
        if not p.is_dir():
            sub = Submission(path=p, student=safe_id(p.stem or str(p)), assignment=assignment)
            sub.error = f"{p} does not exist"
            found.append(sub)
            continue
        root = p / "submitted" if (p / "submitted").is_dir() else p
        try:
            found += _root(root, known, assignment)
        except OSError as e:
            sub = Submission(path=p, student=safe_id(p.name or str(p)), assignment=assignment)
            sub.error = f"cannot read {root}: {e.strerror or e}"
            found.append(sub)
    seen: dict[tuple[str, str | None], Submission] = {}
    out = []
    for sub in _collisions(found):
        key = (sub.student, sub.assignment)
        if sub.assignment is not None and key in seen:
            seen[key].warnings.append(
                f"another submission for the same student and assignment was ignored: {sub.path}"
            )
            continue
        seen[key] = sub
        out.append(sub)
    return out


def collision_id(student: str, given: str) -> str:
    """The id of a colliding folder's error row: its safe id and a digest of its exact name,
    so two folders that become one id keep a row each."""
    digest = hashlib.sha256(given.encode("utf-8", "surrogateescape")).hexdigest()[:6]
    return f"{student}+{digest}"


def _collisions(found: list[Submission]) -> list[Submission]:
    """``found`` with the submissions of colliding students replaced by error rows.

    Two different folder names (``ann lee`` and ``ann_lee``; ``josé`` with a composed and with
    a combining accent) that become one student id would merge two students into one row of
    the gradebook (one grade lost). Each such folder gets its own error row per assignment,
    under :func:`collision_id`, naming every folder behind the id; none of them is graded,
    every other student is.
    """
    names: dict[str, dict[str, list[Path]]] = {}
    for sub in found:
        if sub.given_id:
            names.setdefault(sub.student, {}).setdefault(sub.given_id, []).append(sub.path)
    clash = {sid for sid, given in names.items() if len(given) > 1}
    if not clash:
        return found
    out: list[Submission] = []
    for sub in found:
        if sub.student not in clash:
            out.append(sub)
            continue
        given = names[sub.student]
        # ascii(): two spellings of one name (a composed and a decomposed accent) look the
        # same printed; escaped, they can be told apart
        listed = "; ".join(
            f"{ascii(g)} ({', '.join(str(p) for p in sorted(set(ps))[:2])})"
            for g, ps in sorted(given.items())
        )
        if len({unicodedata.normalize("NFC", g) for g in given}) < len(given):
            listed += (
                " (the same name written in two Unicode forms, with a composed and with a "
                "combining accent)"
            )
        row = Submission(
            path=sub.path,
            student=collision_id(sub.student, sub.given_id),
            assignment=sub.assignment,
            given_id=sub.given_id,
        )
        row.error = (
            f"{len(given)} student folders become the one student id {sub.student!r}: "
            f"{listed}. None of them was graded (this row is {ascii(sub.given_id)}'s): rename the "
            "folders so that each student has one id (letters, digits and . _ @ + - are kept; "
            "any other character becomes _)"
        )
        out.append(row)
    return out
