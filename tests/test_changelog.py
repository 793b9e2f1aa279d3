"""Does CHANGELOG.md record the grading as it is: every function's points, split, cases,
tolerances and known mistakes?

CHANGELOG.md holds a "Grading table" with one row per graded function and a "Known
mistakes" table with the catalogue's ids per function. This test rebuilds both from
the code (the cases and mistakes in autograder/assignments/, the points in the
source notebooks) and fails when a row is missing or stale, so a change to cases,
points, splits, tolerances or the catalogue cannot land without a changelog entry.
`python tests/test_changelog.py` prints the current rows.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = ROOT / "CHANGELOG.md"


def _functions():
    from autograder import assignments
    from autograder.notebooks import notebook

    for a in notebook.available_assignments(ROOT):
        for f in assignments.get(a).functions:
            yield a, f, notebook.points(a, f.name, ROOT)


def grading_rows() -> list[str]:
    rows = []
    for a, f, pts in _functions():
        fixed = sum(1 for c in f.cases if not c.hidden)
        generated = len(f.cases) - fixed
        tols = sorted({(c.rtol, c.atol) for c in f.cases})
        tol_text = ", ".join(f"{r:g}/{t:g}" for r, t in tols)
        split = "/".join(str(f.split.share(k)) for k in ("value", "edge", "invalid"))
        kinds = "/".join(str(len(f.of_kind(k))) for k in ("value", "edge", "invalid"))
        concept = sum(1 for m in f.mistakes if not m.validation)
        rows.append(
            f"| {a} | `{f.name}` | {pts:g} | {split} | {kinds} | {fixed} | {generated} "
            f"| {tol_text} | {concept}/{len(f.mistakes) - concept} |"
        )
    return rows


def mistake_rows() -> list[str]:
    return [
        f"| {a} | `{f.name}` | " + ", ".join(f"`{m.id}`" for m in f.mistakes) + " |"
        for a, f, _ in _functions()
    ]


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def _table_rows(text: str) -> set[str]:
    return {
        line.strip() for line in text.splitlines() if re.match(r"\|\s*\d\d_\w+\s*\|", line.strip())
    }


def _compare(current: list[str], recorded: set[str], what: str) -> None:
    missing = [r for r in current if r not in recorded]
    stale = sorted(recorded - set(current))
    assert not missing and not stale, (
        f"CHANGELOG.md's {what} is out of date: record the change (what, why, which scores "
        "it moves) under a new entry and update the table.\n"
        + "".join(f"  missing: {r}\n" for r in missing)
        + "".join(f"  stale:   {r}\n" for r in stale)
    )


def test_changelog_grading_table_matches_cases_points_splits_and_tolerances():
    """Is every graded function's current points / split / cases per kind / tolerance row in
    CHANGELOG.md, and no row that the code no longer has?"""
    text = CHANGELOG.read_text(encoding="utf-8")
    _compare(grading_rows(), _table_rows(_section(text, "Grading table")), "grading table")


def test_changelog_known_mistakes_match_the_catalogue():
    """Does CHANGELOG.md list every catalogued mistake id of every function, and no other?"""
    text = CHANGELOG.read_text(encoding="utf-8")
    _compare(mistake_rows(), _table_rows(_section(text, "Known mistakes")), "known-mistakes table")


if __name__ == "__main__":
    print("\n".join(grading_rows()))
    print()
    print("\n".join(mistake_rows()))
