"""Generated class folders for `drills grade`'s discovery (Hypothesis strategies).

A class is a list of students, each a name and a shape, written under ``submitted/``:

- names: plain, with spaces or punctuation, accented (composed and decomposed), other
  scripts, dot names, names of assignments, names shaped like a collision row's id
  (``ann_lee+e49591``, ``ann_lee~e49591``), and two names that give one id;
- shapes: nbgrader's ``<student>/<assignment>/<assignment>.ipynb`` (its graded cell also with a
  literal past the grader's parse limit), a notebook beside the
  folder (``<student>/<assignment>.ipynb``), a lone notebook at the root, an empty folder, a
  chain of folders (deeper or shallower than the budget), a folder of many files (more or
  fewer than the budget), a link (to another student, outside, or dangling) in place of a
  folder or a notebook, a FIFO in place of a notebook, a second notebook beside the first, a
  notebook nested under another student's name;
- the command line: the course folder, its ``submitted/``, one ``<student>/<assignment>``
  folder per student (as ``submitted/*/01_exact_kl`` expands), one notebook path per student,
  or the course folder given twice.

:func:`check_discovery` asserts what discovery promises (engine/layout.py): it never raises;
one row per student and assignment; every name at the root ends as a row; a student of a
good shape whose id is their own is graded under it; a tree past the budget is that student's
error row saying so; a glob over ``<student>/<assignment>`` folders gives the course folder's
rows. The budget is made small (:func:`small_budget`) so that generated trees can pass it.
"""

from __future__ import annotations

import contextlib
import json
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from autograder.engine import layout
from autograder.engine.submission import safe_id

REPO = Path(__file__).resolve().parent.parent
SOLUTION = (REPO / "tests" / "fixtures" / "corpus" / "solution.ipynb").read_bytes()
A = "01_exact_kl"
DEPTH, ENTRIES = 6, 60  # the budget while fuzzing (the real one: layout.MAX_DEPTH, MAX_ENTRIES)

# shapes graded under the student's own id ("huge": a 300,000-character literal in a graded
# cell, past what the grader parses: that cell's functions score 0, the row stays)
GOOD = ("nbgrader", "flat", "shallow", "few", "huge")
SHAPES = GOOD + (
    "lone",
    "empty",
    "deep",
    "wide",
    "link-folder",
    "link-notebook",
    "fifo",
    "two-notebooks",
    "nested-other",
)
NAMES = st.one_of(
    st.sampled_from(
        [
            "alice",
            "ann lee",
            "ann_lee",
            "ann_lee+e49591",
            "ann_lee~e49591",
            "josé",
            unicodedata.normalize("NFD", "josé"),
            "王芳",
            "Łukasz",
            ".hidden",
            "-dash",
            A,
            "02_clipped_estimators",
            "a" * 120,
            "x/../y".replace("/", "_"),
            "tab\there",
            "\u202eevil",
        ]
    ),
    st.text(
        st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=12
    ).filter(lambda s: s not in (".", "..", layout.CHECKPOINTS)),
)


@dataclass
class Student:
    name: str
    shape: str
    size: int  # depth of a chain, or files in a wide folder


@st.composite
def class_tree(draw) -> tuple[list[Student], str]:
    """Students with distinct folder names, and the command-line form."""
    n = draw(st.integers(1, 8))
    students: list[Student] = []
    seen: set[str] = set()
    for _ in range(n):
        name = draw(NAMES)
        if name in seen or f"{name}.ipynb" in seen:
            continue
        seen |= {name, f"{name}.ipynb"}
        shape = draw(st.sampled_from(SHAPES))
        size = draw(st.integers(1, 3 * DEPTH if shape in ("deep", "shallow") else 2 * ENTRIES))
        students.append(Student(name, shape, size))
    form = draw(st.sampled_from(["course", "submitted", "glob", "files", "twice"]))
    return students, form


@contextlib.contextmanager
def small_budget():
    saved = layout.MAX_DEPTH, layout.MAX_ENTRIES
    layout.MAX_DEPTH, layout.MAX_ENTRIES = DEPTH, ENTRIES
    try:
        yield
    finally:
        layout.MAX_DEPTH, layout.MAX_ENTRIES = saved


def _nb(path: Path, huge: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(HUGE if huge else SOLUTION)


def _huge() -> bytes:
    nb = json.loads(SOLUTION)
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution"))
    cell["source"] = "DATA = [" + "1," * 150_000 + "]\n" + "".join(cell["source"])
    return json.dumps(nb).encode()


HUGE = _huge()


def write_tree(course: Path, students: list[Student]) -> None:
    """Each student's shape under ``course/submitted``."""
    root = course / "submitted"
    root.mkdir(parents=True)
    (course / "outside").mkdir()
    _nb(course / "outside" / f"{A}.ipynb")
    for s in students:
        home = root / s.name
        if s.shape == "lone":
            _nb(root / f"{s.name}.ipynb")
        elif s.shape == "empty":
            home.mkdir()
        elif s.shape == "flat":
            _nb(home / f"{A}.ipynb")
        elif s.shape == "link-folder":
            home.symlink_to(course / "outside")
        elif s.shape == "link-notebook":
            (home / A).mkdir(parents=True)
            (home / A / f"{A}.ipynb").symlink_to(course / "outside" / f"{A}.ipynb")
        elif s.shape == "fifo":
            (home / A).mkdir(parents=True)
            os.mkfifo(home / A / f"{A}.ipynb")
        elif s.shape == "nested-other":
            _nb(home / "bob" / A / f"{A}.ipynb")
        else:
            _nb(home / A / f"{A}.ipynb", huge=s.shape == "huge")
            if s.shape == "two-notebooks":
                _nb(home / A / f"{A}-Copy1.ipynb")
            elif s.shape in ("deep", "shallow"):
                depth = s.size if s.shape == "deep" else min(s.size, DEPTH - 3)
                chain = home / A / "repo"
                for _ in range(depth):
                    chain = chain / "d"
                chain.mkdir(parents=True)
            elif s.shape in ("wide", "few"):
                count = s.size if s.shape == "wide" else min(s.size, ENTRIES - 10)
                data = home / "data"
                data.mkdir()
                for i in range(count):
                    (data / f"{i}.txt").touch()


def command_line(course: Path, students: list[Student], form: str) -> list[Path]:
    root = course / "submitted"
    if form == "course":
        return [course]
    if form == "submitted":
        return [root]
    if form == "twice":
        return [course, root]
    if form == "glob":
        return sorted(p for p in root.glob(f"*/{A}") if not p.is_symlink())
    return sorted(p for p in root.glob(f"*/{A}/{A}.ipynb") if not p.is_symlink())


def expected_good(students: list[Student], form: str) -> dict[str, str]:
    """safe id -> folder name of the students discovery must grade under their own id: a good
    shape, an id no other name shares, and a form that names them."""
    ids: dict[str, list[str]] = {}
    for s in students:
        ids.setdefault(safe_id(s.name), []).append(s.name)
    good = {}
    for s in students:
        if s.shape not in GOOD or len(ids[safe_id(s.name)]) > 1:
            continue
        if form in ("glob", "files") and s.shape not in ("nbgrader", "huge"):
            continue  # those forms name only <student>/<assignment>/ folders
        if s.name in (A, "02_clipped_estimators") and form != "files":
            continue  # a student folder named like an assignment: a documented special case
        good[safe_id(s.name)] = s.name
    return good


def check_discovery(course: Path, students: list[Student], form: str) -> list:
    """Discover the class as ``form`` names it and assert the promises; returns the rows."""
    paths = command_line(course, students, form)
    if not paths:
        return []
    with small_budget():
        subs = layout.discover(paths)
    keys = [(s.student, s.assignment) for s in subs if s.assignment is not None]
    assert len(keys) == len(set(keys)), f"two rows for one student and assignment: {keys}"
    # one row per entry; a folder too large to read as a whole is its student's error row for
    # each assignment of the run (one entry, one row per assignment, never a second student)
    entries = [
        (s.student, os.path.realpath(s.path), s.assignment if s.whole_folder else None)
        for s in subs
    ]
    assert len(entries) == len(set(entries)), f"one entry, two rows: {entries}"
    found = {s.assignment for s in subs if s.assignment is not None and not s.whole_folder}
    for s in subs:
        if s.whole_folder:  # given to each assignment found (none found: the one row stays)
            assert s.error, f"a whole-folder row without its reason: {s}"
            assert s.assignment is not None or not found, f"not given an assignment: {s}"
    for s in subs:
        assert layout.COLLISION_MARK not in s.student or s.error, f"{s.student!r} graded"
    rows = {s.student: s for s in subs}
    for sid, name in expected_good(students, form).items():
        assert sid in rows, f"{name!r} ({form}) has no row: {sorted(rows)}"
        r = rows[sid]
        assert r.error is None and r.assignment == A, (name, form, r.error)
    if form in ("course", "submitted", "twice"):
        named = {s.given_id for s in subs} | {
            Path(os.path.relpath(s.path, course / "submitted")).parts[0]
            for s in subs
            if str(s.path).startswith(str(course / "submitted") + os.sep)
        }
        for s in students:
            want = f"{s.name}.ipynb" if s.shape == "lone" else s.name
            assert s.name in named or want in named, f"{s.name!r} ({s.shape}) ends as no row"
        for s in students:
            if s.shape in ("deep", "wide") and safe_id(s.name) in rows:
                r = rows[safe_id(s.name)]
                too = (s.shape == "deep" and s.size + 2 > DEPTH) or (
                    s.shape == "wide" and s.size + 3 > ENTRIES
                )
                if too and s.name not in (A, "02_clipped_estimators"):
                    assert r.error and ("deep" in r.error or "files and folders" in r.error), (
                        s,
                        r.error,
                    )
    if form == "glob":
        with small_budget():
            whole = {
                (s.student, s.assignment): s.error is None
                for s in layout.discover([course])
                if s.student in expected_good(students, "glob")
            }
        mine = {
            (s.student, s.assignment): s.error is None
            for s in subs
            if s.student in expected_good(students, "glob")
        }
        assert mine == whole, (mine, whole)
    return subs


def results_rows(out: Path) -> list[tuple[str, str]]:
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return [(s["student"], s["assignment"]) for s in doc["submissions"]]


def check_huge_graded(out: Path, students: list[Student], form: str) -> None:
    """A good student whose graded cell is past the parse limit keeps a graded row (no error),
    with the warning that the cell was not run."""
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    by_id = {s["student"]: s for s in doc["submissions"]}
    for sid, name in expected_good(students, form).items():
        if next(s for s in students if s.name == name).shape != "huge":
            continue
        row = by_id[sid]
        assert row["error"] is None, (name, row["error"])
        assert any("was not run" in w for w in row["warnings"]), row["warnings"]
