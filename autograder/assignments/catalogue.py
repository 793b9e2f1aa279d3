"""The rows CHANGELOG.md records for each graded function, built from the code.

``grading_rows`` (the "Grading table": points, split, cases per kind, tolerances, mistakes
concept/validation) and ``mistake_rows`` (the "Known mistakes" table: the catalogue's ids).
``tests/test_changelog.py`` compares them with CHANGELOG.md; ``drills cases ASSIGNMENT
--scores`` prints them beside each mistake's score.
"""

from __future__ import annotations

import re
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


# A score is a number, or "before → after" in an entry that moved it (the newer figure counts),
# and a mistake added by the entry may say "(new)".
_SCORE = r"(?:[\d.]+ → )?([\d.]+)"
_SCORE_ROW = re.compile(rf"^\| (\S+) \| `(\w+)` \| ([\d.]+) \| (.*) \| {_SCORE} \|\s*$")


def recorded_scores(changelog: str) -> dict[tuple[str, str], dict[str, float]]:
    """The newest score row of each function in CHANGELOG.md's entries (the rows of
    ``drills cases ID --scores``: ``| a | `f` | points | `m` 0.45, … | no checks |``, or
    ``0.45 → 0.3`` where an entry moved a score), as
    {(assignment, function): {mistake id: score, "(no checks)": score}}. The entries are
    newest first, so the first row of a function is its newest."""
    out: dict[tuple[str, str], dict[str, float]] = {}
    for line in changelog.splitlines():
        m = _SCORE_ROW.match(line)
        if not m or (m[1], m[2]) in out:
            continue
        listed = re.findall(rf"`([\w.\-]+)` (?:\(new\) )?{_SCORE}", m[4])
        if listed:
            out[(m[1], m[2])] = {k: float(v) for k, v in listed} | {"(no checks)": float(m[5])}
    return out


def score_problems(
    a: str,
    f: FunctionSpec,
    pts: float,
    scores: dict[str, float],
    no_checks: float,
    recorded: dict[tuple[str, str], dict[str, float]],
) -> list[str]:
    """What is wrong with a function's mistake scores: a catalogued mistake at full marks (the
    grader cannot tell it from the reference: either the reference or the mistake is wrong), or
    a score that differs from the newest score row CHANGELOG.md records for the function (scores
    moved: record why in a new entry, with the rows ``drills cases --scores`` prints)."""
    out = [
        f"{a} {f.name}: mistake {m} scores full marks ({s:g} of {pts:g}): no case tells it from "
        "the reference. Either the mistake is not one, or the reference may be wrong (a sign, "
        "a default or a boundary the mistake gets right)"
        for m, s in scores.items()
        if s >= pts - 1e-9
    ]
    before = recorded.get((a, f.name))
    if before is None:
        return out
    now = scores | {"(no checks)": no_checks}
    moved = [
        f"{m} {before.get(m, 'new')} -> {s:g}"
        for m, s in now.items()
        if m not in before or abs(before[m] - s) > 1e-9
    ]
    moved += [f"{m} {before[m]:g} -> gone" for m in before if m not in now]
    if moved:
        out.append(
            f"{a} {f.name}: scores moved since the CHANGELOG's last score row ({', '.join(moved)})"
            ": add an entry saying why, with the rows above (or, if nothing was meant to "
            "change, the reference may be wrong)"
        )
    return out
