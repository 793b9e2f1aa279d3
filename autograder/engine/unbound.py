"""Names a graded function uses that the grader's program does not define.

The grader runs the locked setup cells and the learner's graded cells, nothing else. A learner's
kernel has more: names imported in an exploration cell, definitions of cells since deleted or
renamed, Jupyter's own ``display``. A function that uses one of them passes its self-check in
the kernel and raises NameError when graded. This module finds such names before anything runs,
from the text alone (``symtable``: the names each function reads as globals), and says where
each comes from and what to do, so the learner meets the cause instead of a bare NameError.

It says less rather than something untrue: a cell with ``from x import *`` (which binds names
no text shows) turns the check off, and a name is reported only when no cell the grader runs
binds it at the top level and it is not a builtin.
"""

from __future__ import annotations

import builtins
import symtable
from collections.abc import Iterable, Sequence

# Names a Jupyter kernel defines itself: they exist in a notebook and not in the grader's program
JUPYTER_NAMES = frozenset({"display", "get_ipython", "In", "Out", "exit", "quit", "_", "__", "___"})
_ALWAYS = frozenset(dir(builtins)) | {"__name__", "__file__", "__builtins__", "__doc__"}
MAX_SCAN_CHARS = 200_000  # an ungraded cell longer than this is not parsed (grader memory)


def _table(source: str) -> symtable.SymbolTable | None:
    try:
        return symtable.symtable(source, "<cell>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _bound(top: symtable.SymbolTable) -> set[str]:
    return {
        s.get_name()
        for s in top.get_symbols()
        if s.is_assigned() or s.is_imported() or s.is_namespace()
    }


def _globals_read(table: symtable.SymbolTable) -> set[str]:
    """Names ``table`` (a function) and everything nested in it read as module globals."""
    out: set[str] = set()
    todo = [table]
    while todo:
        t = todo.pop()
        out |= {s.get_name() for s in t.get_symbols() if s.is_global() and s.is_referenced()}
        todo += t.get_children()
    return out


def missing_names(
    setup: Iterable[str],
    graded: Sequence[str],
    functions: Iterable[str],
    served: dict[str, set[str]],
) -> dict[str, list[str]]:
    """graded function -> the names it (or a function of the graded cells it calls) reads as
    globals that neither the setup cells nor the graded cells bind, nor the grader serves it.
    Empty when a cell star-imports (its names cannot be known)."""
    bound: set[str] = set()
    fn_tables: dict[str, symtable.SymbolTable] = {}
    for src in [*setup, *graded]:
        if "import *" in src:
            return {}
        top = _table(src)
        if top is None:
            continue
        bound |= _bound(top)
        for child in top.get_children():
            if child.get_type() == "function":
                fn_tables[child.get_name()] = child  # the last definition wins, as in a kernel
    out: dict[str, list[str]] = {}
    for f in functions:
        if f not in fn_tables:
            continue
        have = bound | _ALWAYS | served.get(f, set())
        seen, todo, missing = {f}, [f], []
        while todo:
            for name in sorted(_globals_read(fn_tables[todo.pop()])):
                if name in fn_tables and name not in served.get(f, set()):
                    if name not in seen:
                        seen.add(name)
                        todo.append(name)
                elif name not in have and name not in missing:
                    missing.append(name)
        if missing:
            out[f] = missing
    return out


def where_defined(name: str, cells: Iterable[tuple[int, str]]) -> tuple[int, bool] | None:
    """(cell number, imported?) of the last ungraded cell that binds ``name`` at its top level,
    or None. ``cells``: (number, source) of the notebook's cells the grader does not run."""
    found = None
    for number, src in cells:
        if len(src) > MAX_SCAN_CHARS or name not in src:
            continue
        top = _table(src)
        if top is None:
            continue
        try:
            sym = top.lookup(name)
        except KeyError:
            continue
        if sym.is_assigned() or sym.is_imported() or sym.is_namespace():
            found = (number, sym.is_imported())
    return found


def note(function: str, names: list[str], ungraded: list[tuple[int, str]]) -> str:
    """The sentence for ``function``: each name, where it comes from, and what to do."""
    parts = []
    for name in names:
        if name in JUPYTER_NAMES:
            parts.append(
                f"`{name}` is Jupyter's own (your kernel has it; the grader's program does not): "
                "leave it out of your function"
            )
            continue
        at = where_defined(name, ungraded)
        if at is not None:
            number, imported = at
            what = "imported" if imported else "defined"
            parts.append(
                f"`{name}` is {what} in cell {number}, which is not graded (the grader runs the "
                "locked setup cell and your graded cells only): "
                + (
                    "import it in your function's cell, or use what the setup cell imports"
                    if imported
                    else "move that definition into your function's cell"
                )
            )
        else:
            parts.append(
                f"`{name}` is defined in no cell of the saved notebook (deleted, renamed, or not "
                "saved yet?); your kernel may still hold an old definition, which is why a "
                "self-check can pass: save, then restart the kernel and run all cells to see "
                "what the grader sees"
            )
    return (
        f"{function} uses {', '.join(f'`{n}`' for n in names)}, which the grader's program "
        f"does not define: " + "; ".join(parts) + "."
    )
