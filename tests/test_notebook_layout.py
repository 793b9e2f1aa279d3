"""Does every source notebook follow the rules of a notebook (autograder/notebooks/layout.py),
and does docs/authoring.md state each of them?

What only a run can show (the figure and the widget displayed, full points from every hidden
test) is checked on the executed notebook: tests/notebook_checks.py.
"""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, available_assignments

from autograder.notebooks import layout
from autograder.scaffold import skeleton_cells


@pytest.mark.parametrize("assignment", available_assignments())
def test_notebook_follows_every_rule_of_a_notebook(assignment):
    """Title, story, setup cell, a figure, a widget, the closing sections in order, Check my
    work, no outputs: does the source notebook have each?"""
    problems = layout.problems(assignment, ROOT)
    assert not problems, "\n".join(problems)


def test_every_rule_of_a_notebook_is_stated_in_the_authoring_guide():
    """Is each rule written, in the words the check reports, in docs/authoring.md?"""
    text = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    missing = [rule for rule, _ in layout.RULES if rule not in text]
    assert not missing, f"docs/authoring.md does not state: {missing}"


def _write(tmp_path, assignment, cells):
    path = tmp_path / "solutions" / assignment / f"{assignment}.ipynb"
    path.parent.mkdir(parents=True)
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb), encoding="utf-8")


@pytest.mark.parametrize(
    "drop,says",
    [
        ("code-explore-figure", "no cell draws a figure"),
        ("code-explore-widget", "no exploration widget"),
        ("md-story", "no `## The story`"),
        ("code-setup", "no setup cell"),
        ("code-warm-up", "the first code cell does not start Check my work's warm-up"),
        ("md-in-the-field", "closing sections missing: `## In the field…`"),
        ("code-check-my-work", 'check_my_work("08_probe")'),
    ],
)
def test_a_skeleton_missing_a_part_is_told_which_rule_it_breaks(tmp_path, drop, says):
    """The new-notebook skeleton follows every rule; without one of its cells, is the rule it
    breaks named?"""
    cells = skeleton_cells("08_probe", "A probe")
    _write(tmp_path / "whole", "08_probe", cells)
    assert layout.problems("08_probe", tmp_path / "whole") == []
    _write(tmp_path / "cut", "08_probe", [c for c in cells if c["id"] != drop])
    problems = layout.problems("08_probe", tmp_path / "cut")
    assert len(problems) == 1 and says in problems[0], problems


def test_numpy_only_in_an_exploration_cell_is_a_name_the_grader_lacks(tmp_path):
    """07 once imported numpy only in its exploration cell: a thr_weights using np passed its
    self-check in the kernel and raised NameError when graded (0.2 of 2). Does the layout
    check name the import the setup cell lacks?"""
    a = "07_beyond_nthr"
    src = ROOT / "solutions" / a / f"{a}.ipynb"
    dest = tmp_path / "solutions" / a / f"{a}.ipynb"
    dest.parent.mkdir(parents=True)
    nb = json.loads(src.read_text(encoding="utf-8"))
    setup = next(
        c
        for c in nb["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade_id") == "setup_imports"
    )
    setup["source"] = [line for line in setup["source"] if "numpy" not in line]
    tools = next(c for c in nb["cells"] if c.get("id") == "code-tools")
    tools["source"] = ["import numpy as np\n", *tools["source"]]
    dest.write_text(json.dumps(nb), encoding="utf-8")
    found = layout.problems(a, tmp_path)
    assert any("`import numpy as np`" in p and "setup cell does not" in p for p in found), found
