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

import dataclasses
import hashlib
import os
import unicodedata
from pathlib import Path

from autograder.engine import files
from autograder.engine.submission import Submission, safe_id
from autograder.notebooks import notebook

HOLDS_NOTHING = "holds no notebook and no student folder"
CHECKPOINTS = ".ipynb_checkpoints"  # Jupyter's autosave copies: never a submission
TIMESTAMP = "timestamp.txt"
TIMESTAMP_LIMIT = 1000
LINK = (
    "is a symbolic link; links are not followed (a submission is what is inside its own "
    "folder): copy the file or folder itself there"
)


# What one submission's folder may hold before it is refused: a chain of empty folders (a
# ``git clone`` brings one) or a folder of millions of files must cost the grader no more
# than a name on an error row, and cannot stop the rest of the class.
MAX_DEPTH = 32  # folders below a student's folder
MAX_ENTRIES = 20_000  # entries (files, folders, links) read in one student's folder tree


class TooLarge(Exception):
    """A submission's folder tree is beyond :data:`MAX_DEPTH` or :data:`MAX_ENTRIES`."""


class Budget:
    """The entries one submission's folder tree may still cost (see :data:`MAX_ENTRIES`)."""

    def __init__(self, where: Path):
        self.where, self.entries, self.depth = where, MAX_ENTRIES, MAX_DEPTH
        self.left = self.entries

    def take(self, folder: Path) -> None:
        self.left -= 1
        if self.left < 0:
            raise TooLarge(
                f"{self.where} holds more than {self.entries:,} files and folders (the grader "
                f"stopped reading in {folder}): hand in the notebooks only, without the "
                "repository, data or environment around them"
            )


def _entries(folder: Path, budget: Budget | None = None) -> list[tuple[str, Path, str]]:
    """``(name, path, kind)`` of each entry of ``folder``, sorted; kind is "link", "dir",
    "file" or "other" (a pipe, a device, a socket), as the entry itself is (no link followed).
    Each entry read is charged to ``budget`` (:class:`TooLarge` past it)."""
    out = []
    with os.scandir(folder) as it:
        for e in it:
            if budget is not None:
                budget.take(folder)
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


def _holds_notebooks(folder: Path, budget: Budget, depth: int) -> list[Path]:
    """Notebooks under ``folder`` (``depth`` folders below the student's), read until three are
    found, links not followed, checkpoints left out; walked with a stack, not by recursion, so a
    chain of folders of any depth costs no Python stack; past ``budget``: :class:`TooLarge`."""
    found: list[Path] = []
    stack = [(folder, depth)]
    while stack and len(found) < 3:
        top, level = stack.pop()
        if level > budget.depth:
            raise TooLarge(
                f"{budget.where} has folders more than {budget.depth} deep ({top}): hand in "
                "the notebooks only, without the repository or environment around them"
            )
        try:
            entries = _entries(top, budget)
        except OSError:
            continue
        found += [p for n, p, k in entries if _is_notebook(n) and k != "dir"]
        stack += [
            (p, level + 1) for n, p, k in reversed(entries) if k == "dir" and n != CHECKPOINTS
        ]
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
    folder: Path,
    student: str,
    assignment: str | None,
    known: set[str],
    forced: str | None,
    budget: Budget,
) -> tuple[list[Submission], list[str]]:
    """``<student>/<folder>/``: its submissions, and notes for the student's rows."""
    entries = _entries(folder, budget)
    nbs = [(n, p, k) for n, p, k in entries if _is_notebook(n) and k != "dir"]
    deeper = [
        nb
        for n, p, k in entries
        if k == "dir" and n != CHECKPOINTS
        for nb in _holds_notebooks(p, budget, 2)
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
    """``R/<student>/``: every submission in it, or an error row; never another student's
    (one error row when its folder tree is beyond :class:`Budget`)."""
    try:
        subs = _student_folder_within(folder, student, known, forced, Budget(folder))
    except TooLarge as e:
        subs = [_error(folder, student, None, forced, str(e))]
        subs[0].whole_folder = True
    for sub in subs:
        sub.origin = folder
    return subs


def _student_folder_within(
    folder: Path, student: str, known: set[str], forced: str | None, budget: Budget
) -> list[Submission]:
    try:
        entries = _entries(folder, budget)
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
                    p, student, n if n in known else None, known, forced, budget
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
            sub = _notebook(p, k, name, a, forced)
            sub.origin = root if stem in known else p
            found.append(sub)
        elif k == "link":
            sub = _error(p, n, None, forced, f"{p} {LINK}")
            sub.origin = p
            found.append(sub)
        elif k == "dir" and n in known:
            found += _given_assignment_folder(p, root.name, n, known, forced)
        elif k == "dir" and n != CHECKPOINTS:
            found += _student_folder(p, n, known, forced)
    return found


def _given_assignment_folder(
    folder: Path, student: str, assignment: str, known: set[str], forced: str | None
) -> list[Submission]:
    """``<student>/<assignment>/``: the submission in it, or its error row."""
    try:
        subs, notes = _assignment_folder(folder, student, assignment, known, forced, Budget(folder))
    except TooLarge as e:
        subs, notes = (
            [_error(folder / f"{assignment}.ipynb", student, assignment, forced, str(e))],
            [],
        )
    except OSError as e:
        why = f"cannot read {folder}: {e.strerror or e}"
        subs, notes = [_error(folder / f"{assignment}.ipynb", student, assignment, forced, why)], []
    for sub in subs:
        sub.warnings += notes
        sub.origin = folder.parent
    return subs


def _given_file(nb: Path, known: set[str], forced: str | None) -> Submission:
    """A notebook named on the command line: the instructor chose it, so its path may name
    its student as nbgrader's layout does (``.../<student>/<assignment>/<file>``). The path is
    read as an absolute one, so ``x.ipynb`` given from inside its folder is the same student
    as ``submitted/alice/01_exact_kl/x.ipynb`` given from the course folder."""
    parts = Path(os.path.abspath(nb)).parts
    student, assignment, up = None, None, 0
    if "submitted" in parts[:-1]:
        i = len(parts) - 1 - parts[::-1].index("submitted")
        rest = parts[i + 1 :]
        if len(rest) == 3:
            student, assignment, up = rest[0], rest[1], 2
        elif len(rest) == 2:
            student, up = rest[0], 1
            assignment = nb.stem if nb.stem in known else None
    if student is None and len(parts) >= 4 and parts[-2] in known:
        student, assignment, up = parts[-3], parts[-2], 2
    if student is None and nb.stem in known and len(parts) >= 3:
        student, assignment, up = parts[-2], nb.stem, 1
    if student is None:
        student = nb.stem
    kind = "link" if nb.is_symlink() else "file" if nb.is_file() else "other"
    sub = _notebook(nb, kind, student, assignment, forced)
    sub.origin = Path(*parts[: len(parts) - up]) if up else nb
    return sub


def discover(
    paths: list[str | Path],
    assignment: str | None = None,
    known: set[str] | None = None,
    notes: list[str] | None = None,
) -> list[Submission]:
    """Submissions named by ``paths`` (notebooks or folders), in a stable order (see the module).

    A folder named after an assignment (``submitted/alice/01_exact_kl``, as a shell expands
    ``submitted/*/01_exact_kl``) is that assignment of the student its parent folder names.

    The same student and assignment twice from one folder (the folder under two given paths,
    or two copies in one student's folder): the first is graded, the second becomes a warning
    on it. From two different folders (two people who share a name): neither is graded, each
    gets its own error row (:func:`_same_id`). A given folder that holds nothing gives no row
    (it names no one): it is said in ``notes``, for the console.
    """
    known = set(known if known is not None else notebook.ASSIGNMENTS)
    found: list[Submission] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file() or (p.is_symlink() and _is_notebook(p.name)):
            found.append(_given_file(p, known, assignment))
            continue
        if os.path.lexists(p) and not p.is_dir():  # a FIFO, a device, a socket: named, refused
            found.append(_given_file(p, known, assignment))
            continue
        if not p.is_dir():
            sub = Submission(path=p, student=safe_id(p.stem or str(p)), assignment=assignment)
            sub.error = f"{p} does not exist"
            sub.origin = p
            found.append(sub)
            continue
        whole = Path(os.path.abspath(p))
        if (
            p.name in known
            and not (p / "submitted").is_dir()
            and whole.parent.name
            not in (
                "",
                "submitted",
            )
        ):
            found += _given_assignment_folder(p, whole.parent.name, p.name, known, assignment)
            continue
        root = p / "submitted" if (p / "submitted").is_dir() else p
        try:
            got = _root(root, known, assignment)
            if not got and notes is not None:  # every path given ends as a row or a line
                notes.append(f"{root} {HOLDS_NOTHING}")
            found += got
        except OSError as e:
            sub = Submission(path=p, student=safe_id(p.name or str(p)), assignment=assignment)
            sub.error = f"cannot read {root}: {e.strerror or e}"
            sub.origin = p
            found.append(sub)
    return _spread_whole_folders(_same_id(_collisions(found)), assignment)


def _spread_whole_folders(found: list[Submission], assignment: str | None) -> list[Submission]:
    """A student whose whole folder could not be read handed something in, but no one can tell
    which assignment: their error row is given to each assignment of the run (``assignment``,
    or every assignment found) that they have no row for, so no export or report says they did
    not hand it in. With no assignment found at all, the one row stays (no student is lost)."""
    run = sorted({assignment} if assignment else {s.assignment for s in found if s.assignment})
    if not run:
        return found
    have = {(s.student, s.assignment) for s in found}
    out: list[Submission] = []
    for sub in found:
        mine = [a for a in run if (sub.student, a) not in have] if sub.whole_folder else []
        if not mine:
            out.append(sub)
            continue
        for a in mine:
            have.add((sub.student, a))
            out.append(dataclasses.replace(sub, assignment=a, warnings=list(sub.warnings)))
    return out


def _same_id(found: list[Submission]) -> list[Submission]:
    """One submission per student and assignment. Copies from one origin (one folder given
    twice, or two notebooks for one assignment in one student's folder): the first is graded,
    the others are warnings on it. From different origins (``sec1/alice`` and ``sec2/alice``;
    a lone ``alice.ipynb`` beside a folder ``alice/``): never merged, never one graded in
    another's place: each becomes an error row under an id of its own (:func:`collision_id`
    of its origin), naming the others."""
    # the same entry reached twice (a folder and the folder inside it both given): one row
    once: dict[tuple[str, str], Submission] = {}
    unique = []
    for sub in found:
        key = (sub.student, _where(sub.path))
        if key in once:
            if sub.assignment is not None:
                once[key].warnings.append(
                    "another submission for the same student and assignment was ignored: "
                    f"{sub.path} (the same file, named twice on the command line)"
                )
            continue
        once[key] = sub
        unique.append(sub)
    found = unique
    groups: dict[tuple[str, str], list[Submission]] = {}
    for sub in found:
        if sub.assignment is not None:
            groups.setdefault((sub.student, sub.assignment), []).append(sub)
    refused: set[int] = set()
    for subs in groups.values():
        origins = {_where(s.origin or s.path) for s in subs}
        if len(origins) > 1:
            refused |= {id(s) for s in subs}
    out: list[Submission] = []
    seen: dict[tuple[str, str], Submission] = {}
    for sub in found:
        key = (sub.student, sub.assignment)
        if id(sub) in refused:
            others = sorted({str(s.origin or s.path) for s in groups[key] if s is not sub})
            out.append(
                _refused(
                    sub,
                    _where(sub.origin or sub.path),
                    f"{sub.origin or sub.path} and {', '.join(others)} all name student "
                    f"{sub.student!r} for {sub.assignment}: two people, or one person's work in "
                    "two places; neither was graded. Give each student one folder (or grade the "
                    "folders in separate runs, each with its own --out)",
                )
            )
            continue
        if sub.assignment is not None and key in seen:
            seen[key].warnings.append(
                f"another submission for the same student and assignment was ignored: {sub.path}"
            )
            continue
        if sub.assignment is not None:
            seen[key] = sub
        out.append(sub)
    return out


def _where(path: Path) -> str:
    return os.path.realpath(path)


# A collision row's id is the student id, this mark and six hexadecimal characters. The mark
# is a character no student id holds (safe_id replaces it), so no folder's name, however it
# is spelled, becomes the id of another folder's error row.
COLLISION_MARK = "~"


def collision_id(student: str, given: str) -> str:
    """The id of a colliding folder's error row: its safe id and a digest of its exact name,
    so two folders that become one id keep a row each."""
    digest = hashlib.sha256(given.encode("utf-8", "surrogateescape")).hexdigest()[:6]
    return f"{student}{COLLISION_MARK}{digest}"


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
        out.append(
            _refused(
                sub,
                sub.given_id,
                f"{len(given)} student folders become the one student id {sub.student!r}: "
                f"{listed}. None of them was graded (this row is {ascii(sub.given_id)}'s): rename "
                "the folders so that each student has one id (letters, digits and . _ @ + - are "
                "kept; any other character becomes _)",
            )
        )
    return out


def _refused(sub: Submission, tell_apart: str, why: str) -> Submission:
    """``sub``'s error row, under :func:`collision_id` of ``tell_apart`` (what distinguishes it
    from the others behind its id: its exact folder name, or where it was found)."""
    row = Submission(
        path=sub.path,
        student=collision_id(sub.student, tell_apart),
        assignment=sub.assignment,
        given_id=sub.given_id,
        origin=sub.origin,
    )
    row.error = why
    return row
