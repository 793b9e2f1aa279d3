"""Every edge and invalid case checks a rule the notebook states.

Each edge and invalid case carries the words of its rule (``Case.rule``, from
autograder/cases/rules.py). The test fails when a case has no rule or when the words are
not in the function's description: its section of the source notebook (the markdown between
the previous solution cell and its own, without grading lines), its docstring, and the
description of a function it refers to ("as log_ratios", "the checks of clipped_expectation", "the same checks as above").
"""

from __future__ import annotations

import ast
import re

import pytest
from conftest import ROOT, available_assignments

from autograder import assignments
from autograder.notebooks import notebook

ASSIGNMENTS = available_assignments()
FUNCTIONS = [(a, f.name) for a in ASSIGNMENTS for f in assignments.get(a).functions]
EVERY_GRADED = {f.name: a for a in ASSIGNMENTS for f in assignments.get(a).functions}
SAME_AS_ABOVE = ("as above", "the same rules", "the same checks")


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("`", "").replace("*", "").lower()).strip()


def _own_description(assignment: str, name: str) -> tuple[str, str | None]:
    """(this function's section and docstring, the graded function just above it)."""
    nb = notebook.read(notebook.source_path(assignment, ROOT))
    cells = nb.cells
    idx = next(
        k
        for k, c in enumerate(cells)
        if notebook.cell_role(c) == "solution" and re.search(rf"^def {name}\(", c.source, re.M)
    )
    parts, k = [], idx - 1
    while k >= 0 and notebook.cell_role(cells[k]) != "solution":
        c = cells[k]
        if c.cell_type == "markdown" and not c.source.lstrip().startswith("**How `"):
            parts.append(c.source)
        k -= 1
    previous = None
    if k >= 0:
        above = re.findall(r"^def (\w+)\(", cells[k].source, re.M)
        previous = next((n for n in reversed(above) if n in EVERY_GRADED), None)
    doc = ast.get_docstring(notebook.solution_defs(assignment, ROOT)[name]) or ""
    return normalise("\n".join(reversed(parts)) + "\n" + doc), previous


def description(assignment: str, name: str, seen: frozenset = frozenset()) -> str:
    """The function's description, with those of the functions it refers to."""
    own, previous = _own_description(assignment, name)
    text = own
    seen = seen | {name}
    refs = [
        n
        for n in EVERY_GRADED
        if n not in seen and re.search(rf"\b(as|of|like) {n}\b|\b{n} and \w+\b", own)
    ]
    if previous and previous not in seen and any(p in own for p in SAME_AS_ABOVE):
        refs.append(previous)
    for ref in refs:
        text += " " + description(EVERY_GRADED[ref], ref, seen)
    return text


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_every_edge_and_invalid_case_checks_a_rule_the_notebook_states(assignment, function):
    """Does every edge and invalid case name its rule, in words of the function's description?"""
    f = assignments.get(assignment).function(function)
    text = description(assignment, function)
    unstated = [
        f"{c.id} ({c.rule!r})" if c.rule else f"{c.id} (no rule)"
        for c in f.cases
        if c.kind != "value" and (not c.rule or normalise(c.rule) not in text)
    ]
    assert not unstated, (
        f"{function}: these cases check rules the notebook does not state: {unstated}; state "
        "the rule in the function's section or docstring, or drop the case"
    )


def test_a_rule_missing_from_the_description_fails():
    """The check can fail: words that no description holds are not found."""
    assert "a batch of seventeen rows" not in description("03_sum_vs_mean", "masked_mean")
    assert "a row with no valid token" in description("03_sum_vs_mean", "masked_mean")
