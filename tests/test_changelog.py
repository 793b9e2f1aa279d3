"""Does CHANGELOG.md record the grading as it is: every function's points, split, cases,
tolerances and known mistakes?

CHANGELOG.md holds a "Grading table" with one row per graded function and a "Known
mistakes" table with the catalogue's ids per function. This test rebuilds both from
the code (the cases and mistakes in autograder/assignments/, the points in the
source notebooks) and fails when a row is missing or stale, so a change to cases,
points, splits, tolerances or the catalogue cannot land without a changelog entry.
`python tests/test_changelog.py` prints the current rows (built in
autograder/assignments/catalogue.py); `drills cases ASSIGNMENT --scores` prints them with
each mistake's score.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = ROOT / "CHANGELOG.md"


def grading_rows() -> list[str]:
    from autograder.assignments import catalogue

    return catalogue.grading_rows(ROOT)


def mistake_rows() -> list[str]:
    from autograder.assignments import catalogue

    return catalogue.mistake_rows(ROOT)


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
        "it moves) under a new entry and replace the stale rows by the missing ones "
        "(`python tests/test_changelog.py` prints every row; `drills cases ASSIGNMENT "
        "--scores` the mistakes' scores to quote).\n"
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


def test_drills_cases_scores_prints_the_rows_and_each_mistakes_score(capsys):
    """`drills cases 01_exact_kl --scores`: the Known mistakes rows exactly as the CHANGELOG
    wants them, then per function every mistake id with a score below the points, and the
    no-checks score (at least 80 %: tests/test_cases.py's contract)."""
    import re

    from autograder import assignments, cli

    assert cli.main(["cases", "01_exact_kl", "--scores"]) == 0
    out = capsys.readouterr().out
    want = [r for r in mistake_rows() if r.startswith("| 01_exact_kl |")]
    assert all(r in out.splitlines() for r in want)
    scored = out.split("Scores", 1)[1].splitlines()
    for f in assignments.get("01_exact_kl").functions:
        row = next(x for x in scored if x.startswith(f"| 01_exact_kl | `{f.name}` | "))
        _, _, _, pts, listed, no_checks, _ = row.split("|")
        scores = dict(re.findall(r"`([\w.\-]+)` ([\d.]+)", listed))
        assert list(scores) == [m.id for m in f.mistakes], row
        assert all(float(s) < float(pts) for s in scores.values()), row
        assert float(pts) > float(no_checks) >= 0.8 * float(pts), row
    # log_ratios' no-validation is the reference without any check: the no-checks submission
    lr = next(x for x in scored if x.startswith("| 01_exact_kl | `log_ratios` | "))
    assert re.search(r"`no-validation` ([\d.]+) \| \1 \|", lr), lr


if __name__ == "__main__":
    print("\n".join(grading_rows()))
    print()
    print("\n".join(mistake_rows()))
