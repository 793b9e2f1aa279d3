"""The trusted reference: the solution of the source notebook, run in this process.

The grader never keeps a second copy of a solution. It executes the source
notebook's setup cells and solution cells (nothing else: no exploration, no
plots) into a fresh module and takes expected values from the functions there.
"""

from __future__ import annotations

import contextlib
import io
import sys
import types
import warnings
from pathlib import Path

from autograder.notebooks import notebook, streams

_CACHE: dict[tuple[str, str], dict] = {}


def namespace(assignment: str, root: Path | None = None) -> dict:
    """Globals of the executed setup + solution cells of ``assignment`` (cached)."""
    path = notebook.source_path(assignment, root)
    key = (str(path), assignment)
    if key not in _CACHE:
        nb = notebook.read(path)
        module = types.ModuleType(f"drills_reference_{assignment}")
        module.__file__ = str(path)
        sys.modules[module.__name__] = module  # dataclasses look their module up here
        ns = module.__dict__
        with _quiet():
            for role, grade_id, source in notebook.code_cells(nb, {"setup", "solution"}):
                code = compile(source, f"<{assignment}:{grade_id or role}>", "exec")
                exec(code, ns)  # noqa: S102 (trusted: our own source notebook)
        _CACHE[key] = ns
    return _CACHE[key]


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with streams.redirected(io.StringIO(), io.StringIO()):
            yield
