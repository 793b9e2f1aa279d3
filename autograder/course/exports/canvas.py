"""canvas.csv: the gradebook in Canvas's grade import format.

Canvas's gradebook import reads a CSV whose first columns say who the student is
(``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``), followed by one
column per assignment; a column that names no existing assignment creates a new one.
Sources opened for this: Ohio State's CarmenCanvas guide "Import a CSV file to Carmen
grades" (https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades:
the student columns, "new assignment columns ... generate new assignments") and VCU's
"Gradebook Action Menu" page on Canvas's export/import
(https://ts.vcu.edu/askit/teaching-and-learning/canvas/faculty/grading-faculty/gradebook-action-menu-faculty/).
Canvas's own export names an assignment column ``Name (canvas id)`` and puts a
``Points Possible`` row second; this file does the same.

Students are mapped by their drills/nbgrader student id:

- without a roster, the student id goes into ``Student`` and ``SIS Login ID`` (the
  login is what nbgrader on JupyterHub uses as the id) and assignment columns are
  named by the assignment id (new assignments on import);
- with ``--canvas-roster EXPORT.csv`` (a gradebook export from the Canvas course), each
  student id is looked up in the export's ``SIS Login ID``, then ``SIS User ID``, then
  ``ID`` column, and the row carries Canvas's own name, ids and section; an assignment
  column of the export whose name (before `` (id)``) is the assignment id is reused, so
  the import updates that assignment. Roster students without a grade get an empty cell
  (Canvas leaves those unchanged) and is listed in :attr:`Roster.no_grade` (did not hand in,
  or could not be graded); graded students missing from the roster are listed in
  :attr:`Roster.unmatched` and still written with their id as the login. `drills grade`
  prints both lists and report.html shows them.

A missing or ungradable notebook (no submission; a notebook that could not be read, a link,
a grader failure) is an empty cell, not a 0: Canvas leaves an empty cell's grade unchanged, so a
grade that could not be computed never overwrites or reads as a real zero. Why each one could
not be graded is in results.json, report.html and the student's feedback page.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.engine.layout import COLLISION_MARK

if TYPE_CHECKING:
    from autograder.course.report import Row

IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MATCH_ORDER = ["SIS Login ID", "SIS User ID", "ID"]
_COLUMN_ID = re.compile(r"^(.*?)\s*\((\d+)\)\s*$")


class RosterError(ValueError):
    """The roster is not a Canvas gradebook export."""


@dataclass
class Roster:
    """A Canvas gradebook export: identity rows and assignment column names."""

    rows: list[dict[str, str]]
    columns: list[str]  # the export's assignment columns, as named there
    unmatched: list[str] = field(default_factory=list)  # filled by canvas_csv
    # filled by canvas_csv: each roster row x assignment with no grade, as {"student": the id
    # it matched ("" for none), "name", "login", "assignment", "why"}, "why" being
    # "did not hand in" or "could not be graded"
    no_grade: list[dict[str, str]] = field(default_factory=list)

    def find(self, student: str) -> dict[str, str] | None:
        """The roster row whose SIS Login ID, SIS User ID or ID (in that order) is ``student``,
        compared in composed Unicode as ids are (a login ``josé`` exported with a combining
        accent still matches)."""
        for col in MATCH_ORDER:
            for row in self.rows:
                if unicodedata.normalize("NFC", row.get(col, "").strip()) == student:
                    return row
        return None

    def column_for(self, assignment: str) -> str | None:
        for c in self.columns:
            m = _COLUMN_ID.match(c)
            if (m.group(1) if m else c).strip() == assignment:
                return c
        return None


def read_roster(path: Path | None) -> Roster | None:
    """Read a Canvas gradebook export (None when no roster is given)."""
    if path is None:
        return None
    with Path(path).open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        missing = [c for c in IDENTITY if c not in header]
        if missing:
            raise RosterError(
                f"{path} is not a Canvas gradebook export: no column {', '.join(missing)}"
            )
        rows = [r for r in reader if r.get("Student", "").strip() != "Points Possible"]
    columns = [c for c in header if c not in IDENTITY and _COLUMN_ID.match(c)]
    return Roster(rows, columns)


def _num(x: float) -> str:
    return str(float(x))


def canvas_csv(rows: Iterable[Row], roster: Roster | None = None) -> str:
    """Canvas's import CSV for gradebook rows (one per student × assignment)."""
    rows = list(rows)
    points: dict[str, float] = {}
    for r in rows:
        points[r.assignment] = max(points.get(r.assignment, 0.0), r.max_score)
    # A row of no assignment (a notebook whose assignment could not be told: max_score 0) makes
    # no column: importing it would create an assignment in Canvas. Its student still has a row.
    assignments = sorted(a for a, p in points.items() if p > 0)
    scores: dict[str, dict[str, float]] = {}
    ungradable: set[tuple[str, str]] = set()
    for r in rows:
        got = scores.setdefault(r.student, {})
        if r.has_grade and r.assignment in assignments:
            got[r.assignment] = r.score
        elif r.submitted and not r.graded:
            ungradable.add((r.student, r.assignment))
    columns = [(roster.column_for(a) if roster else None) or a for a in assignments]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(IDENTITY + columns)
    w.writerow(["    Points Possible", "", "", "", ""] + [_num(points[a]) for a in assignments])
    written: set[str] = set()
    if roster is not None:
        roster.unmatched = []
        roster.no_grade = []
        by_row: dict[int, str] = {}
        # rows of folders that collided on one id (``<id>~<digest>``): each belongs, ungraded,
        # to the roster row of ``<id>``, whose student then handed in but was not graded
        collided: dict[int, set[str]] = {}
        for student in sorted(scores):
            base = student.rsplit(COLLISION_MARK, 1)[0] if COLLISION_MARK in student else None
            row = roster.find(base) if base else roster.find(student)
            if row is None:
                roster.unmatched.append(student)
            elif base:
                collided.setdefault(id(row), set()).update(a for s, a in ungradable if s == student)
            else:
                by_row.setdefault(id(row), student)
        for row in roster.rows:
            student = by_row.get(id(row))
            got = scores.get(student, {}) if student else {}
            login = row.get("SIS Login ID", "").strip()
            for a in assignments:
                if a in got:
                    continue
                if a in collided.get(id(row), set()):
                    why = (
                        "could not be graded: two folders give this id (see the rows "
                        f"{login}{COLLISION_MARK}…)"
                    )
                else:
                    why = "could not be graded" if (student, a) in ungradable else "did not hand in"
                roster.no_grade.append(
                    {
                        "student": student or "",
                        "name": row.get("Student", "").strip(),
                        "login": login,
                        "assignment": a,
                        "why": why,
                    }
                )
            w.writerow(
                [row.get(c, "") for c in IDENTITY]
                + [_num(got[a]) if a in got else "" for a in assignments]
            )
            if student:
                written.add(student)
    for student in sorted(scores):
        if student in written:
            continue
        got = scores[student]
        w.writerow(
            [student, "", "", student, ""] + [_num(got[a]) if a in got else "" for a in assignments]
        )
    return buf.getvalue()
