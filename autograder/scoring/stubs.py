"""Helpers left as stubs: which functions a graded function calls that still raise NotImplementedError.

A released exercise hands the learner every body to write, private helpers included (05's
``_require_tensor``, 01's ``_check_distributions``): each is a docstring, maybe a comment, and
``raise NotImplementedError()``. A learner who writes ``group_advantages`` but not the helper it
calls sees every case raise NotImplementedError, which reads as "not attempted yet" unless
the helper is named. These functions read the learner's *source* (never run it) and say which
stubs a function reaches, through the functions it calls, as the cells define them.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Iterable


def is_stub(node: ast.AST) -> bool:
    """Is this function's body only a docstring and ``raise NotImplementedError`` (with or
    without a call or a message)?"""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = list(node.body)
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc
    if isinstance(exc, ast.Call):
        exc = exc.func
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def top_level_functions(sources: Iterable[str]) -> dict[str, ast.AST]:
    """The top-level functions of ``sources`` (cells in the order they run; the last
    definition of a name wins, as in a kernel); a cell that does not compile adds none."""
    out: dict[str, ast.AST] = {}
    for src in sources:
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[node.name] = node
    return out


def _called(node: ast.AST) -> list[str]:
    """Names a function's body reads, in order of appearance, each once."""
    return list(_names_read(node))


@functools.lru_cache(maxsize=256)
def _names_read(node: ast.AST) -> tuple[str, ...]:
    """:func:`_called`, once per node: one submission's program asks it of the same parsed
    definitions for every function that reaches them (a few dozen nodes, so a small cache
    that never pins more than a few submissions' trees). The cache holds the node, so its
    identity is never reused; nodes are never changed after parsing."""
    seen: dict[str, None] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            seen.setdefault(n.id)
    return tuple(seen)


def stub_callees(defs: dict[str, ast.AST], name: str) -> list[str]:
    """The stubs that ``name`` reaches through the functions of ``defs`` it calls (directly
    or through each other), in the order met; [] when ``name`` is itself a stub or undefined."""
    if name not in defs or is_stub(defs[name]):
        return []
    found: list[str] = []
    seen = {name}
    todo = [name]
    while todo:
        for callee in _called(defs[todo.pop(0)]):
            if callee in seen or callee not in defs:
                continue
            seen.add(callee)
            if is_stub(defs[callee]):
                found.append(callee)
            else:
                todo.append(callee)
    return found


def names_reached(defs: dict[str, ast.AST], name: str) -> list[str]:
    """Every name ``name``'s body reads, and those of the functions of ``defs`` it calls
    (directly or through each other), in the order met."""
    out: list[str] = []
    seen = {name}
    todo = [name]
    while todo:
        for n in _called(defs[todo.pop(0)]):
            if n in seen:
                continue
            seen.add(n)
            out.append(n)
            if n in defs:
                todo.append(n)
    return out


def _live_defs(fn, namespace: dict, skip: set[str] = frozenset()) -> tuple[str, dict]:
    """``fn``'s name and the defs (parsed with inspect) of it and of the functions of
    ``namespace`` it reaches, those named in ``skip`` left out (not followed)."""
    defs: dict[str, ast.AST] = {}

    def parse(obj) -> ast.AST | None:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
        except (OSError, TypeError, SyntaxError, ValueError):
            return None
        return tree.body[0] if tree.body else None

    root = parse(fn)
    name = getattr(fn, "__name__", "")
    if root is None or not name:
        return "", {}
    defs[name] = root
    todo = [root]
    while todo:
        for callee in _called(todo.pop(0)):
            obj = namespace.get(callee)
            if callee in defs or callee in skip or not inspect.isfunction(obj):
                continue
            node = parse(obj)
            if node is not None:
                defs[callee] = node
                todo.append(node)
    return name, defs


def live_is_stub(obj) -> bool:
    """:func:`is_stub` for a function object (its source read with inspect); False when the
    source cannot be read."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return False
    return bool(tree.body) and is_stub(tree.body[0])


def live_stub_callees(fn, namespace: dict, skip: set[str] = frozenset()) -> list[str]:
    """:func:`stub_callees` for a function object in a kernel (the in-kernel engine): its
    source and that of the functions of ``namespace`` it reaches (but those in ``skip``: the
    callees served by value), read with inspect; [] when a source cannot be read."""
    name, defs = _live_defs(fn, namespace, skip)
    return stub_callees(defs, name) if name else []


def live_names_reached(fn, namespace: dict, skip: set[str] = frozenset()) -> list[str]:
    """:func:`names_reached` for a function object in a kernel; [] when its source cannot
    be read."""
    name, defs = _live_defs(fn, namespace, skip)
    return names_reached(defs, name) if name else []


def stub_text(function: str, helpers: list[str], where: dict[str, str] | None = None) -> str:
    """The sentence that names the stubs ``function`` calls and says what the grader did with
    them (graded ``function`` with them as they are). Its twin for a helper that does not
    compile is :func:`broken_text`: the two slips are told in one form."""
    where = where or {}

    def one(h: str) -> str:
        cell = f" (in your cell {where[h]!r})" if where.get(h) else ""
        return f"`{h}`{cell}"

    names = " and ".join(one(h) for h in helpers)
    one_ = len(helpers) == 1
    return (
        f"{function} calls {names}, which still {'raises' if one_ else 'raise'} "
        f"NotImplementedError: the grader graded {function} with your "
        f"{'stub' if one_ else 'stubs'}, so every check that reaches "
        f"{'it' if one_ else 'one'} raises; write {'its' if one_ else 'their'} body too (the "
        "exercise leaves the helpers to you as well), then check again"
    )


def broken_text(function: str, helpers: list[str]) -> str:
    """The sentence that names the helpers ``function`` calls whose definitions do not compile
    and says what the grader did with them (left them out, graded the rest of their cells
    without them): :func:`stub_text`'s form."""
    names = " and ".join(f"`{h}`" for h in helpers)
    if len(helpers) == 1:
        return (
            f"{function} calls {names}, not defined because its definition does not compile: "
            "the grader left it out and graded the rest of the cell without it, so every check "
            "that reaches it raises NameError; fix the SyntaxError reported for it, then check "
            "again"
        )
    return (
        f"{function} calls {names}, not defined because their definitions do not compile: "
        "the grader left them out and graded the rest of their cells without them, so every "
        "check that reaches one raises NameError; fix the SyntaxError reported for each of "
        "them, then check again"
    )
