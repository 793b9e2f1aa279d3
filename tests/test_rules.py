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


def _descriptions() -> dict[str, str]:
    return {name: description(a, name) for a, name in FUNCTIONS}


def generic(rule: str, descriptions: dict[str, str]) -> str:
    """Why ``rule`` is too generic to show that its case's rule is stated ("" when it is not):
    a single plain word ("empty", "nan") or words that most functions' descriptions hold
    ("not finite") would be found whatever the text says about this case."""
    words = normalise(rule)
    if len(words.split()) < 2 and not re.search(r"[^a-z]", words):
        return "a single plain word"
    holding = sum(words in d for d in descriptions.values())
    if holding > len(descriptions) / 2:
        return f"in {holding} of {len(descriptions)} functions' descriptions"
    return ""


def test_every_rule_is_specific_to_its_case():
    """Are the words of every edge and invalid case's rule more than a generic word that any
    description holds?"""
    descriptions = _descriptions()
    found = [
        f"{f.name}/{c.id} ({c.rule!r}: {why})"
        for a in ASSIGNMENTS
        for f in assignments.get(a).functions
        for c in f.cases
        if c.kind != "value" and c.rule and (why := generic(c.rule, descriptions))
    ]
    assert not found, (
        f"rules too generic to show that the text states them: {found}; quote the words of the "
        "description that state this case's rule"
    )


def test_a_generic_rule_is_caught():
    """The check can fail: "empty", "nan" and "not finite" are generic; a phrase of one
    description is not."""
    descriptions = _descriptions()
    assert generic("empty", descriptions) and generic("NaN", descriptions)
    assert generic("not finite", descriptions)
    assert not generic("a batch with no rows", descriptions)


@pytest.mark.parametrize(
    "assignment,function,words",
    [
        ("03_sum_vs_mean", "masked_mean", "for a batch with no rows"),
        ("03_sum_vs_mean", "aggregate_loss", "for a batch with no rows"),
        ("05_grpo_lld", "sequence_logprobs", "logits that are not a floating tensor (integer"),
        ("06_nthr", "nthr_weights", "non-floating scores (an integer tensor)"),
    ],
)
def test_rule_once_only_in_a_docstring_is_stated_in_the_section(assignment, function, words):
    """A 0-row batch (masked_mean, aggregate_loss through masked_mean), integer logits and
    integer scores were graded while only a docstring's Raises line named them: the section
    a learner works from states them too."""
    assert normalise(words) in description(assignment, function)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_learner_reads_the_docstrings_the_rules_are_found_in(assignment):
    """The rules are looked up in the source notebook: does the exercise a learner opens hold
    every graded function's docstring word for word (none left inside a solution region)?"""
    import json

    nb = json.loads((ROOT / "exercises" / assignment / f"{assignment}.ipynb").read_text())
    docs = {}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        try:
            tree = ast.parse("".join(cell["source"]))
        except SyntaxError:
            continue
        docs.update(
            {n.name: ast.get_docstring(n) for n in tree.body if isinstance(n, ast.FunctionDef)}
        )
    source = notebook.solution_defs(assignment, ROOT)
    differ = [
        f.name
        for f in assignments.get(assignment).functions
        if docs.get(f.name) != ast.get_docstring(source[f.name])
    ]
    assert not differ, f"the exercise's docstrings of {differ} differ from the source's"


def test_a_rule_missing_from_the_description_fails():
    """The check can fail: words that no description holds are not found."""
    assert "a batch of seventeen rows" not in description("03_sum_vs_mean", "masked_mean")
    assert "a row with no valid token" in description("03_sum_vs_mean", "masked_mean")
