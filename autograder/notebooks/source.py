"""The functions of a source notebook as code to rewrite: a graded function's def and the
private helpers it calls (what mutation testing and the callee rules work on), compiled back
into the reference's namespace, and the reference without its input checks (the build of an
``unchecked=`` mistake, see :class:`autograder.cases.spec.Mistake`).

Trusted code only: everything here reads the course's own source notebooks.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from pathlib import Path

from autograder.notebooks import notebook, reference


def targets(assignment: str, function: str, root: Path | None = None) -> list[ast.FunctionDef]:
    """The function's def and the private helpers (``_name``) it calls, transitively, in order."""
    defs = notebook.solution_defs(assignment, root)
    if function not in defs:
        raise KeyError(f"{assignment}: no def {function} in the solution cells")
    order, todo = [], [function]
    while todo:
        name = todo.pop(0)
        if name in order:
            continue
        order.append(name)
        for node in ast.walk(defs[name]):
            if isinstance(node, ast.Name) and node.id.startswith("_") and node.id in defs:
                todo.append(node.id)
    return [defs[n] for n in order]


def name_of(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def compile_variant(
    assignment: str, function: str, defs: list[ast.FunctionDef], root: Path | None
) -> tuple[Callable, dict]:
    module = ast.fix_missing_locations(ast.Module(body=defs, type_ignores=[]))
    code = compile(module, f"<variant of {assignment}:{function}>", "exec")
    ns = dict(reference.namespace(assignment, root))
    exec(code, ns)  # noqa: S102 (trusted: our own source notebook, mutated)
    return ns[function], ns


class _DropChecks(ast.NodeTransformer):
    """Replace ``raise ValueError(...)`` by ``pass``: all of them, or those whose guarding
    ``if`` test or message mentions one of ``words``."""

    def __init__(self, words: tuple[str, ...]):
        self.words = words
        self.guards: list[str] = []
        self.removed = 0

    def visit_If(self, node):
        self.guards.append(ast.unparse(node.test))
        node.body = [self.visit(s) for s in node.body]
        self.guards.pop()
        node.orelse = [self.visit(s) for s in node.orelse]
        return node

    def visit_Raise(self, node):
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if exc is None or name_of(exc) != "ValueError":
            return node
        text = " ".join(self.guards[-1:]) + " " + ast.unparse(node)
        if self.words and not any(w in text for w in self.words):
            return node
        self.removed += 1
        return ast.copy_location(ast.Pass(), node)


def without_checks(
    assignment: str, function: str, words: tuple[str, ...] = (), root: Path | None = None
) -> tuple[Callable, dict]:
    """The reference ``function`` with its ``raise ValueError`` statements removed (all, or those
    about ``words``), and the namespace it runs in."""
    drop = _DropChecks(tuple(words))
    defs = [drop.visit(copy.deepcopy(d)) for d in targets(assignment, function, root)]
    if not drop.removed:
        raise ValueError(f"{assignment}:{function}: no input check matches {words!r}")
    return compile_variant(assignment, function, defs, root)


_UNCHECKED: dict[tuple, tuple[dict, Callable]] = {}


def unchecked(ns: dict, function: str, words: tuple[str, ...]) -> Callable:
    """For a Mistake: the reference function of namespace ``ns`` without its input checks.

    Built once per namespace (the source's definitions copied, transformed and compiled):
    a class computes the mistakes' outcomes once per student, with the same namespace."""
    key = (id(ns), function, tuple(words))
    hit = _UNCHECKED.get(key)
    if hit is not None and hit[0] is ns:
        return hit[1]
    path = Path(ns["__file__"])  # solutions/<id>/<id>.ipynb (see reference.namespace)
    built = without_checks(path.stem, function, words, path.parent.parent.parent)[0]
    if len(_UNCHECKED) >= 512:
        _UNCHECKED.clear()
    _UNCHECKED[key] = (ns, built)
    return built
