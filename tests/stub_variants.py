"""Every stub variant of every notebook, graded in this process: the solution with one function
(a graded one or a helper) put back to the stub the exercise hands out.

What each graded function is told is then checked for feedback that adds up: the costs
shown (each diagnosis and the "Not recognised" rest) sum to exactly the points it lost, and
a helper's stub is one line, with no other line read from the checks it made raise.
"""

from __future__ import annotations

import ast
import math
import sys
import types
from collections.abc import Iterator
from pathlib import Path

from autograder import assignments
from autograder.cases import seeds
from autograder.notebooks import notebook
from autograder.scoring import evaluate, stubs
from autograder.scoring.memo import LazyMistakes, reference_outcomes

ROOT = Path(__file__).resolve().parent.parent


def _stubbed(source: str, name: str, delete: bool = False) -> str:
    """``source`` (a cell) with the top-level ``def name`` reduced to its docstring and
    ``raise NotImplementedError()``, as the released exercise writes a stub (``delete``:
    removed, as a learner who deleted it)."""
    tree = ast.parse(source)
    if delete:
        tree.body = [
            n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name == name)
        ]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            doc = ast.get_docstring(node, clean=False)
            body: list[ast.stmt] = [ast.Expr(ast.Constant(doc))] if doc is not None else []
            body.append(ast.Raise(ast.Call(ast.Name("NotImplementedError"), [], []), None))
            node.body = body
    return ast.unparse(ast.fix_missing_locations(tree))


def variants(assignment: str) -> list[str]:
    """The functions of ``assignment``'s solution cells, each of which is one stub variant."""
    return list(notebook.solution_defs(assignment, ROOT))


def grade_variant(
    assignment: str, stubbed: str, delete: bool = False
) -> list[evaluate.FunctionResult]:
    """Every graded function of ``assignment`` with ``stubbed`` left as a stub (``delete``:
    deleted); a graded function that is not defined is left out."""
    nb = notebook.read(notebook.source_path(assignment, ROOT))
    cells = [
        (role, src if role != "solution" else _stubbed(src, stubbed, delete))
        for role, _, src in notebook.code_cells(nb, {"setup", "solution"})
    ]
    module = types.ModuleType(f"drills_stub_variant_{assignment}")
    sys.modules[module.__name__] = module  # dataclasses look their module up here
    ns = module.__dict__
    with evaluate.silenced():
        for _, src in cells:
            exec(compile(src, f"<{assignment}>", "exec"), ns)  # noqa: S102 (our own notebook)
    defs = stubs.top_level_functions(src for role, src in cells if role == "solution")
    secret = seeds.course_secret(seeds.PUBLIC_DEFAULT_SECRET)
    out = []
    for fspec in assignments.get(assignment).functions:
        if fspec.name not in ns:
            continue
        points = notebook.points(assignment, fspec.name, ROOT)
        inputs = evaluate.materialize(assignment, fspec, secret)
        expected = reference_outcomes(assignment, fspec, inputs, ROOT)
        got, times = evaluate.run_cases(ns[fspec.name], inputs, ns)
        helpers = stubs.stub_callees(defs, fspec.name)
        note = stubs.stub_text(fspec.name, helpers) if helpers else ""
        out.append(
            evaluate.score(
                assignment,
                fspec,
                points,
                inputs,
                expected,
                got,
                times,
                LazyMistakes(assignment, fspec.name, inputs, ROOT),
                stub_note=note,
            )
        )
    return out


def problems(r: evaluate.FunctionResult) -> Iterator[str]:
    """What does not add up in one function's feedback."""
    if r.error or not r.attempted or r.score >= r.points:
        if r.diagnoses or r.unexplained_checks:
            yield f"{r.function}: diagnoses beside full marks, an error or no attempt"
        return
    lost = round(round(r.points, 2) - r.score, 2)
    shown = sum(d.points for d in r.diagnoses) + r.unexplained
    if not math.isclose(shown, lost, abs_tol=1e-9):
        yield (
            f"{r.function}: the costs shown sum to {shown:g} but it lost {lost:g} "
            f"({[(d.id, d.points) for d in r.diagnoses]}, rest {r.unexplained:g})"
        )
    failed = sum(not c.passed for c in r.cases)
    if r.unexplained_checks > failed:
        yield f"{r.function}: {r.unexplained_checks} unexplained checks of {failed} failed"
    ids = [d.id for d in r.diagnoses]
    if len(ids) != len(set(ids)):
        yield f"{r.function}: one diagnosis twice: {ids}"
    # an exception raised on valid inputs too is a crash: input checks that raise it are not
    # a missing check ("must raise ValueError … instead of returning NaN")
    crash = {
        c.got["raised"]
        for c in r.cases
        if not c.passed and c.kind != "invalid" and "raised" in c.got
        if "raised" not in c.expected
    }
    invalid = [c for c in r.cases if not c.passed and c.kind == "invalid"]
    if crash and invalid and all(c.got.get("raised") in crash for c in invalid):
        told = [d.id for d in r.diagnoses if d.kind == "validation"]
        if told:
            yield f"{r.function}: a crash ({sorted(crash)}) read as missing checks {told}"
    for helper, raised in (("stub-helper", "NotImplementedError"), ("broken-helper", "NameError")):
        if helper in ids:
            others = [d for d in r.diagnoses if d.id != helper and raised in d.text]
            if others:
                yield f"{r.function}: {helper} and another line about {raised}: {others[0].text}"
