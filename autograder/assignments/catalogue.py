"""The rows CHANGELOG.md records for each graded function, built from the code.

``grading_rows`` (the "Grading table": points, split, cases per kind, tolerances, mistakes
concept/validation) and ``mistake_rows`` (the "Known mistakes" table: the catalogue's ids).
``tests/test_changelog.py`` compares them with CHANGELOG.md; ``drills cases ASSIGNMENT
--scores`` prints them beside each mistake's score.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from autograder import assignments
from autograder.cases.spec import KINDS, FunctionSpec
from autograder.notebooks import notebook


def functions(
    root: Path | None = None, only: list[str] | None = None
) -> Iterator[tuple[str, FunctionSpec, float]]:
    """(assignment, FunctionSpec, points) of every graded function, in course order."""
    for a in notebook.available_assignments(root):
        if only and a not in only:
            continue
        for f in assignments.get(a).functions:
            yield a, f, notebook.points(a, f.name, root)


def grading_row(a: str, f: FunctionSpec, pts: float) -> str:
    fixed = sum(1 for c in f.cases if not c.hidden)
    generated = len(f.cases) - fixed
    tols = sorted({(c.rtol, c.atol) for c in f.cases})
    tol_text = ", ".join(f"{r:g}/{t:g}" for r, t in tols)
    split = "/".join(str(f.split.share(k)) for k in KINDS)
    kinds = "/".join(str(len(f.of_kind(k))) for k in KINDS)
    concept = sum(1 for m in f.mistakes if not m.validation)
    return (
        f"| {a} | `{f.name}` | {pts:g} | {split} | {kinds} | {fixed} | {generated} "
        f"| {tol_text} | {concept}/{len(f.mistakes) - concept} |"
    )


def mistake_row(a: str, f: FunctionSpec) -> str:
    return f"| {a} | `{f.name}` | " + ", ".join(f"`{m.id}`" for m in f.mistakes) + " |"


def grading_rows(root: Path | None = None, only: list[str] | None = None) -> list[str]:
    return [grading_row(a, f, pts) for a, f, pts in functions(root, only)]


def mistake_rows(root: Path | None = None, only: list[str] | None = None) -> list[str]:
    return [mistake_row(a, f) for a, f, _ in functions(root, only)]
