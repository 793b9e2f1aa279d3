"""One slip, one charge, without the reference in the learner's process: callees served by value.

A graded function that calls another graded function (03's ``shaped_reward`` calling
``mean_sampled_log_ratio``), or a helper the learner left unusable (05's ``_require_finite``
still a stub), is graded with the *reference* callee, so that the slip costs points only
where it was made. The reference callee's code never reaches the learner's process: here, in the
trusted parent, the reference caller runs on each case's inputs with every callee it reaches
wrapped by a recorder, and each call's arguments and outcome are kept. A case's inputs then
carry that table (``inp["serve"]``), plain values and nothing else; while learner code runs on
the case, :class:`autograder.cases.codec.served_callees` puts in each callee's place a function
that answers from the table. A call whose arguments match no recorded call (within a float
tolerance) runs the learner's own callee, as it would without serving.

Which callees a function may be served (:func:`served_names`): every function of the source
notebook's solution cells that the reference function reaches through its calls, except the
function itself and the helpers given in its own cell (those are its code). Which of these a
submission is served (:func:`restrict`, decided by ``submission.build_program`` for `drills
grade` and ``kernel`` in a kernel): every graded callee (a slip there is charged at the
callee's own cases), and each helper the learner left unusable (a stub, deleted, or a
definition that does not compile), which is charged once, to the graded function of the cell
the notebook gives it in. A helper the learner wrote runs as written wherever it is called:
its mistakes show at every function whose cases they fail, including cases only another
function's inputs reach.

Trusted code only: the reference runs here, never in a learner's process.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import warnings
from pathlib import Path
from typing import Any

from autograder.cases.codec import encode, outcome_of
from autograder.notebooks import course_values, notebook, reference, streams

_LAYOUTS: dict[str, dict[str, str]] = {}


def _layout(assignment: str, root: Path | None) -> dict[str, str]:
    """Every top-level def of the source notebook's solution cells -> the grade_id of its cell
    (read once per notebook, as notebook.solution_defs is)."""
    path = notebook.source_path(assignment, root)
    if str(path) not in _LAYOUTS:
        where: dict[str, str] = {}
        for _, gid, src in notebook.code_cells(notebook.source(assignment, root), {"solution"}):
            for node in ast.parse(src).body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    where[node.name] = gid
        _LAYOUTS[str(path)] = where
    return dict(_LAYOUTS[str(path)])


def owner_cells(assignment: str, root: Path | None = None) -> dict[str, str]:
    """Each function of the solution cells -> the grade_id of the cell the notebook gives it in
    (a helper belongs to the graded function of that cell)."""
    try:
        return _layout(assignment, root)
    except (KeyError, OSError, ValueError, SyntaxError):
        return {}


_PROVIDED: dict[str, dict[str, str]] = {}


def provided_names(assignment: str, root: Path | None = None) -> frozenset[str]:
    """Functions the notebook asks the learner to bring from another notebook (a solution cell
    whose metadata says ``"drills": {"graded_in": "<assignment>"}``: 04's
    ``mean_sampled_log_ratio``, graded in 03). They are graded there, so here they are always
    served by value, never charged: the notebook does not hand out another notebook's answer,
    and a slip in the copy costs points only where the function is graded."""
    return frozenset(_provided(assignment, root))


def _provided(assignment: str, root: Path | None) -> dict[str, str]:
    """{provided function: the assignment that grades it}, read once per source notebook."""
    try:
        path = notebook.source_path(assignment, root)
    except (KeyError, OSError, ValueError):
        return {}
    if str(path) not in _PROVIDED:
        found: dict[str, str] = {}
        try:
            cells = notebook.source(assignment, root).cells
        except (OSError, ValueError, RuntimeError):
            cells = []
        for cell in cells:
            meta = cell.get("metadata", {}).get("drills", {})
            if cell.get("cell_type") == "code" and isinstance(meta, dict) and meta.get("graded_in"):
                for name in notebook.top_level_function_names(cell.source):
                    found[name] = str(meta["graded_in"])
        _PROVIDED[str(path)] = found
    return _PROVIDED[str(path)]


_SERVED: dict[tuple, list[str]] = {}
_GRADED: dict[tuple[str, str], list[str]] = {}  # (notebook, assignment) -> graded functions


def served_names(
    assignment: str, function: str, root: Path | None = None, graded: list[str] | None = None
) -> list[str]:
    """The reference functions ``function``'s cases are served by value (see the module's
    docstring), in the order the reference reaches them; [] when none. Worked out once per
    notebook and function (from the definitions notebook.solution_defs reads once), not once
    per submission. ``graded``: the assignment's graded functions where the caller has them
    (`drills grade` reads them from the outcome cache), so that the case module, which
    imports torch for 05-07, is not imported for this alone."""
    try:
        path = str(notebook.source_path(assignment, root))
        key = (path, assignment, function, None if graded is None else tuple(sorted(graded)))
    except (KeyError, OSError, ValueError):
        return []
    if graded is not None:
        _GRADED[(path, assignment)] = list(graded)
    if key not in _SERVED:
        if course_values.active(root or notebook.course_root()):
            # the course form holds no reference to walk: the names, as the full form found them
            _SERVED[key] = list(course_values.bundle(assignment)["served"].get(function, []))
        else:
            _SERVED[key] = _served_names(assignment, function, root, graded)
    return list(_SERVED[key])


def _graded_names(assignment: str, root: Path | None) -> set[str] | None:
    """The assignment's graded functions: as a caller of :func:`served_names` gave them, else
    from its case module (imported); None for an unknown assignment."""
    try:
        known = _GRADED.get((str(notebook.source_path(assignment, root)), assignment))
    except (KeyError, OSError, ValueError):
        known = None
    if known is not None:
        return set(known)
    if course_values.active(root or notebook.course_root()):
        return set(course_values.bundle(assignment)["names"])
    from autograder import assignments

    try:
        return set(assignments.get(assignment).names)
    except KeyError:
        return None


def _served_names(
    assignment: str, function: str, root: Path | None, graded_names: list[str] | None
) -> list[str]:
    try:
        defs = notebook.solution_defs(assignment, root)
        where = _layout(assignment, root)
    except (KeyError, OSError, ValueError, SyntaxError):
        return []
    if function not in defs:
        return []
    own_cell = where.get(function)
    order: list[str] = []
    todo = [function]
    seen = {function}
    while todo:
        for n in ast.walk(defs[todo.pop(0)]):
            if isinstance(n, ast.Name) and n.id in defs and n.id not in seen:
                seen.add(n.id)
                order.append(n.id)
                todo.append(n.id)
    # helpers of the function's own cell are its own code; a graded function is never "own"
    graded = set(graded_names) if graded_names is not None else _graded_names(assignment, root)
    graded = graded or set()
    return [n for n in order if n in graded or where.get(n) != own_cell]


@contextlib.contextmanager
def _silenced():
    import numpy as np

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        with streams.redirected(io.StringIO(), io.StringIO()):
            yield


def _parameters(fn) -> list[list]:
    """The served function's parameters as [name, kind, has_default, encoded default]."""
    out = []
    for p in inspect.signature(fn).parameters.values():
        has = p.default is not inspect.Parameter.empty
        out.append([p.name, p.kind.name, has, encode(p.default) if has else None])
    return out


def _call_key(sig: inspect.Signature, args: tuple, kwargs: dict) -> list:
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return [encode(bound.arguments[name]) for name in sig.parameters]


class _Tracer:
    """A copy of the reference namespace with the solution cells run again in it (so that its
    functions look their callees up in this copy, not in the shared reference namespace other
    threads may be using), every function of the solution cells wrapped by a recorder that
    appends ``(name, arguments, outcome)`` to ``log``. One per notebook, used under ``lock``."""

    def __init__(self, assignment: str, root: Path | None) -> None:
        import threading

        self.lock = threading.Lock()
        self.log: list[tuple[str, list, dict]] = []
        ns = dict(reference.namespace(assignment, root))
        nb = notebook.read(notebook.source_path(assignment, root))
        with _silenced():
            for _, gid, src in notebook.code_cells(nb, {"solution"}):
                exec(compile(src, f"<{assignment}:{gid}>", "exec"), ns)  # noqa: S102 (trusted source)
        self.params: dict[str, list] = {}
        self.originals: dict[str, Any] = {}
        for name in notebook.solution_defs(assignment, root):
            fn = ns.get(name)
            if callable(fn):
                self.originals[name] = fn
                self.params[name] = _parameters(fn)
                ns[name] = self._recorder(name, fn, inspect.signature(fn))
        self.ns = ns

    def _recorder(self, name: str, original, sig: inspect.Signature):
        log = self.log

        def record(*args: Any, **kwargs: Any) -> Any:
            try:
                key = _call_key(sig, args, kwargs)  # before the call: it may change its inputs
            except Exception:  # noqa: BLE001 (arguments with no plain form: not served)
                key = None
            try:
                value = original(*args, **kwargs)
            except Exception as e:
                if key is not None:
                    # the exception's type only: its message is the reference's text
                    log.append((name, key, {"raised": type(e).__name__}))
                raise
            if key is not None:
                try:
                    log.append((name, key, {"value": encode(value)}))
                except Exception:  # noqa: BLE001 (a value with no plain form: not served)
                    pass
            return value

        record.__name__ = name
        return record


_TRACERS: dict[str, _Tracer] = {}


def _tracer(assignment: str, root: Path | None) -> _Tracer:
    key = str(notebook.source_path(assignment, root))
    if key not in _TRACERS:
        _TRACERS[key] = _Tracer(assignment, root)
    return _TRACERS[key]


def tables(
    assignment: str, function: str, inputs: list[dict], root: Path | None = None
) -> list[dict | None]:
    """For each case of ``inputs``: the served table (``{"functions": {name: {"params": ...,
    "calls": [[key, outcome], ...]}}}``) of the callees the reference ``function`` calls on
    that case, or None when it calls none."""
    names = set(served_names(assignment, function, root))
    if not names:
        return [None] * len(inputs)
    tracer = _tracer(assignment, root)
    out: list[dict | None] = []
    with tracer.lock:
        fn = tracer.originals[function]  # the function itself is not recorded: its callees are
        for inp in inputs:
            tracer.log.clear()
            with _silenced():
                outcome_of(fn, inp["args"], inp["kwargs"], tracer.ns)
            functions: dict[str, dict] = {}
            for name, key, outcome in tracer.log:
                if name not in names:
                    continue
                entry = functions.setdefault(name, {"params": tracer.params[name], "calls": []})
                if not any(k == key for k, _ in entry["calls"]):
                    entry["calls"].append([key, outcome])
            out.append({"functions": functions} if functions else None)
        tracer.log.clear()
    return out


def attach(assignment: str, function: str, inputs: list[dict], root: Path | None = None) -> None:
    """Put each case's served table in its inputs (``inp["serve"]``), where there is one.

    A table may hold a graded callee's reference output on one of that callee's own inputs
    (03's shaped_reward passes mean_sampled_log_ratio the numbers of its fixed cases; 04's
    task_reward and extract_code draw from the same pools of responses): `drills grade` runs
    the callers in children apart from the rest (course.grade_cli._execute_callers_apart), so
    that no child holds both."""
    for inp, table in zip(inputs, tables(assignment, function, inputs, root)):
        if table is not None:
            inp["serve"] = table


def restrict(inputs: list[dict], keep) -> list[dict]:
    """``inputs`` whose served tables hold only the functions named in ``keep`` (the others
    run as the learner wrote them); the same list when nothing is taken out."""
    keep = set(keep)
    if all(set((inp.get("serve") or {}).get("functions", {})) <= keep for inp in inputs):
        return inputs
    out = []
    for inp in inputs:
        table = {
            n: t for n, t in (inp.get("serve") or {}).get("functions", {}).items() if n in keep
        }
        inp = {k: v for k, v in inp.items() if k != "serve"}
        if table:
            inp["serve"] = {"functions": table}
        out.append(inp)
    return out


def note(assignment: str, function: str, root: Path | None = None) -> str:
    """What the feedback says of a function graded with served graded callees ("" if none).
    Helpers are served to every function that calls one, and named only when it matters
    (a learner's helper that is missing, a stub or does not compile: see :func:`charged_note`)."""
    graded = _graded_names(assignment, root)
    if graded is None:
        return ""
    reached = served_names(assignment, function, root, graded=sorted(graded))
    names = [n for n in reached if n in graded]
    provided = _provided(assignment, root)
    brought = [n for n in reached if n in provided]
    lines = []
    if names:
        listed = " and ".join(f"`{n}`" for n in names)
        lines.append(
            f"Graded with the reference {listed} in place of yours: a slip there costs points "
            "only there, once."
        )
    if brought:
        listed = " and ".join(f"`{n}`" for n in brought)
        lines.append(
            f"Graded with the reference {listed} in place of your copy: "
            f"{'it is' if len(brought) == 1 else 'they are'} graded in "
            f"notebook {provided[brought[0]]}, not here."
        )
    return " ".join(lines)


def charged_text(helper: str, why: str, owner: str | None, others: list[str]) -> str:
    """The one line that says where a learner's broken helper was charged: to ``owner`` (the
    graded function of the cell the notebook gives the helper in), once; ``others`` were
    served the reference helper. ``why``: "is not defined", "still raises
    NotImplementedError", "does not compile"."""
    text = f"Your `{helper}` {why}: "
    if owner is not None:
        text += f"that is charged once, to {owner} (the helper is part of its cell)"
    if others:
        text += ("; " if owner is not None else "") + (
            ", ".join(others)
            + (" was" if len(others) == 1 else " were")
            + f" graded with the reference `{helper}` in its place"
        )
    return text + "."
