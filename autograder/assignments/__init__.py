"""Cases and known mistakes, one module per assignment (``aNN_<name>.py`` with a ``SPEC``).

A known mistake is one entry in its function's ``mistakes`` (see ``spec.Mistake``)::

    Mistake(
        "unweighted",
        "you took the unweighted average of the log ratios; weight each one by the policy's p_i",
        formula=lambda policy, reference: fsum(log(p / q) for p, q in zip(policy, reference)) / len(policy),
        source="a documented source (an issue, a fix, a paper), or spec.NO_SOURCE",
    )

``formula`` gets the graded function's arguments (defaults filled in; add a parameter
``ns`` for the reference namespace) after the reference has validated them; a mistake
about input checks is ``unchecked=True`` (or ``unchecked=("beta",)``: only the checks
whose test or message mentions "beta"). Adding one also means: its id in the notebook's
common-mistakes table, a CHANGELOG entry and its Known mistakes row; tests/test_cases.py
then checks that it loses points, is diagnosed first (alone and without input checks),
and that its ``validation`` flag matches where it fails.

Besides the case modules: ``catalogue`` (the rows CHANGELOG.md records, and the scores it last
recorded), ``properties`` (what each reference must satisfy on every case's inputs, beyond its
anchors: tests/test_reference.py), ``common`` (shared helpers and cited sources).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from autograder.cases.spec import AssignmentSpec

MODULES = {
    "01_exact_kl": "a01_exact_kl",
    "02_clipped_estimators": "a02_clipped_estimators",
    "03_sum_vs_mean": "a03_sum_vs_mean",
    "04_rlef_turn_rewards": "a04_rlef_turn_rewards",
    "05_grpo_lld": "a05_grpo_lld",
    "06_nthr": "a06_nthr",
    "07_beyond_nthr": "a07_beyond_nthr",
}


def get(assignment: str) -> AssignmentSpec:
    if assignment not in MODULES:
        raise KeyError(f"unknown assignment {assignment!r}; known: {', '.join(MODULES)}")
    module = importlib.import_module(f"autograder.assignments.{MODULES[assignment]}")
    return module.SPEC


def uses_torch(assignment: str) -> bool:
    """Whether grading ``assignment`` imports torch: its case module, or an autograder module
    it imports (followed transitively), imports torch. Read from the source, without importing
    it. A check of such a notebook pays a torch import (in the grader and in the sandbox), so
    its click target is 2.5 s, not the 1 s of the NumPy notebooks (docs/speed.md)."""
    if assignment not in MODULES:
        raise KeyError(f"unknown assignment {assignment!r}; known: {', '.join(MODULES)}")
    package = Path(__file__).resolve().parent.parent  # autograder/
    todo = [package / "assignments" / f"{MODULES[assignment]}.py"]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules = [node.module]
            else:
                continue
            for m in modules:
                top, *rest = m.split(".")
                if top == "torch":
                    return True
                if top == "autograder" and rest:
                    module = package.joinpath(*rest)
                    todo += [module.with_suffix(".py"), module / "__init__.py"]
    return False
