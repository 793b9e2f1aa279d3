"""Does CHANGELOG.md record the grading as it is: every function's points, cases and tolerances?

CHANGELOG.md holds a "Grading table" with one row per graded function. This
test rebuilds each row from the code (the cases in autograder/assignments/ and
the points in the source notebooks) and fails when a row is missing or stale,
so a change to cases, points or tolerances cannot land without a changelog
entry. `python tests/test_changelog.py` prints the current rows.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = ROOT / "CHANGELOG.md"


def grading_rows() -> list[str]:
    from autograder import assignments, notebook

    rows = []
    for a in notebook.available_assignments(ROOT):
        for f in assignments.get(a).functions:
            fixed = sum(1 for c in f.cases if not c.hidden)
            generated = len(f.cases) - fixed
            tols = sorted({(c.rtol, c.atol) for c in f.cases})
            tol_text = ", ".join(f"{r:g}/{t:g}" for r, t in tols)
            pts = notebook.points(a, f.name, ROOT)
            rows.append(
                f"| {a} | `{f.name}` | {pts:g} | {fixed} | {generated} | {tol_text} | {len(f.mistakes)} |"
            )
    return rows


def _table_rows(text: str) -> set[str]:
    return {
        line.strip() for line in text.splitlines() if re.match(r"\|\s*\d\d_\w+\s*\|", line.strip())
    }


def test_changelog_grading_table_matches_cases_points_and_tolerances():
    """Is every graded function's current points / case count / tolerance row in CHANGELOG.md, and
    no row that the code no longer has?"""
    current = grading_rows()
    recorded = _table_rows(CHANGELOG.read_text(encoding="utf-8"))
    missing = [r for r in current if r not in recorded]
    stale = sorted(recorded - set(current))
    assert not missing and not stale, (
        "CHANGELOG.md's grading table is out of date: record the change (what, why, which scores "
        "it moves) under a new entry and update the table.\n"
        + "".join(f"  missing: {r}\n" for r in missing)
        + "".join(f"  stale:   {r}\n" for r in stale)
    )


if __name__ == "__main__":
    print("\n".join(grading_rows()))
