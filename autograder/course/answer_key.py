"""Is an answer key in what students receive? A scan of the released notebooks, by behaviour.

A released notebook must not implement a graded function of the course, its own or another
notebook's: a working function in a setup or exploration cell can be copied into the graded
cell (04's setup once carried 03's ``mean_sampled_log_ratio``, which copied into 03 took full
marks). Names prove nothing (a copy can be renamed), so the scan runs code: every function a
released notebook defines, in any code cell, is called on every case of every graded function
of the course whose arguments it accepts (the fixed cases and the public draw of the generated
ones), and one that gives the reference's outcome on every value case of a graded function is
reported.

What it runs of a notebook: its imports, its function and class definitions and the literal
constants beside them, never a cell's other statements (an exploration cell's training run).
A function that needs a name those statements would have made fails its calls and is not
reported: a scan that runs less says less, never something untrue.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import json
import sys
import types
import warnings
from dataclasses import dataclass
from pathlib import Path

from autograder import assignments
from autograder.cases import seeds
from autograder.cases.codec import decode
from autograder.cases.compare import same_outcome
from autograder.notebooks import notebook, reference
from autograder.scoring import evaluate, memo

_ORIGIN = "<released notebook {}>"


@dataclass(frozen=True)
class Finding:
    notebook: str  # the released notebook that holds the function
    cell: int  # its code cell's number in the notebook (1-based, over all cells)
    function: str  # the function's name there
    assignment: str  # the notebook whose graded function it computes
    graded: str  # that graded function
    cases: int  # the value cases it reproduced (all of them)

    def __str__(self) -> str:
        return (
            f"{self.notebook}: `{self.function}` (cell {self.cell}) gives the reference's "
            f"outcome on all "
            f"{self.cases} value cases of {self.assignment} `{self.graded}`: it is an answer "
            "key; take it out of the released notebook"
        )


def _definitions(source: str) -> ast.Module | None:
    """The statements of a cell the scan runs: imports, definitions, literal constants."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    keep = []
    for node in tree.body:
        if isinstance(
            node,
            (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef),
        ):
            keep.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            try:
                ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                continue
            keep.append(node)
    return ast.Module(body=keep, type_ignores=[])


def released_functions(path: Path) -> tuple[list[tuple[int, str, object]], dict]:
    """([(cell number, name, function)] of every function the notebook at ``path`` defines,
    each definition kept even where a later cell binds its name again; its namespace).
    A statement that fails (an import the machine lacks) is skipped; the rest still run."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    # a module of its own, registered: dataclasses look their module up by name
    module = types.ModuleType(f"drills_released_{Path(path).stem}")
    sys.modules[module.__name__] = module
    ns: dict = module.__dict__
    origin = _ORIGIN.format(Path(path).name)
    found: list[tuple[int, str, object]] = []
    with _quiet():
        for number, cell in enumerate(nb.get("cells", []), 1):
            if cell.get("cell_type") != "code":
                continue
            src = cell.get("source", "")
            src = "".join(src) if isinstance(src, list) else str(src)
            tree = _definitions(src)
            if tree is None:
                continue
            for node in tree.body:
                mod = ast.Module(body=[node], type_ignores=[])
                try:
                    exec(compile(mod, origin, "exec"), ns)  # noqa: S102 (the course's own notebooks)
                except Exception:  # noqa: BLE001, S112 (an import this machine lacks)
                    continue
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    obj = ns.get(node.name)
                    if inspect.isfunction(obj):
                        found.append((number, node.name, obj))
    return found, ns


@contextlib.contextmanager
def _quiet():
    with (
        warnings.catch_warnings(),
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
    ):
        warnings.simplefilter("ignore")
        yield


def _accepts(fn, inp: dict, ns: dict) -> bool:
    """Can ``fn`` be called with this case's arguments (by count and keyword names)?"""
    try:
        args, kwargs = decode(inp["args"], ns), decode(inp["kwargs"], ns)
        inspect.signature(fn).bind(*range(len(args)), **dict.fromkeys(kwargs, 0))
    except Exception:  # noqa: BLE001 (no signature, a record this scan cannot decode)
        return False
    return True


def file_functions(path: Path) -> tuple[list[tuple[int, str, object]], dict]:
    """The functions a Python file defines, as released_functions gives a notebook's (its
    imports, definitions and literal constants run, one statement at a time, each compiled as
    the file's ``from __future__`` imports ask; the line number in place of the cell number),
    and its namespace. For files that are not importable here as what they are (a wheel's
    copy of this package: run beside the package that is imported)."""
    import __future__

    text = Path(path).read_text(encoding="utf-8")
    tree = _definitions(text)
    module = types.ModuleType(f"drills_scanned_{Path(path).stem}")
    sys.modules[module.__name__] = module
    ns: dict = module.__dict__
    ns["__file__"] = str(path)
    flags = 0
    for node in tree.body if tree is not None else []:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for alias in node.names:
                flags |= getattr(__future__, alias.name).compiler_flag
    found: list[tuple[int, str, object]] = []
    with _quiet():
        for node in tree.body if tree is not None else []:
            mod = ast.Module(body=[node], type_ignores=[])
            try:
                exec(compile(mod, str(path), "exec", flags=flags, dont_inherit=True), ns)  # noqa: S102 (this package's own files)
            except Exception:  # noqa: BLE001, S112 (an import this machine lacks)
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                obj = ns.get(node.name)
                if inspect.isfunction(obj):
                    found.append((node.lineno, node.name, obj))
    return found, ns


def module_functions(module) -> tuple[list[tuple[int, str, object]], dict]:
    """The functions a Python module defines (not those it imports), as released_functions
    gives a notebook's (line number in place of cell number), and its namespace."""
    ns = vars(module)
    found = [
        (obj.__code__.co_firstlineno, name, obj)
        for name, obj in ns.items()
        if inspect.isfunction(obj) and obj.__module__ == module.__name__
    ]
    return found, ns


def scan(
    released: list[Path], course: list[str] | None = None, modules: tuple = (), files: tuple = ()
) -> list[Finding]:
    """Every function of the ``released`` notebooks (and of ``modules``, Python modules a
    learner's environment holds, and of ``files``, Python files read by file_functions) that
    computes a graded function of ``course`` (default: every assignment with a source
    notebook). A module's or file's finding names it as its notebook and the function's line
    as its cell."""
    course = course or notebook.available_assignments()
    candidates = [(p.stem, released_functions(p)) for p in released]
    candidates += [(m.__name__, module_functions(m)) for m in modules]
    candidates += [(str(f), file_functions(f)) for f in files]
    findings: list[Finding] = []
    for assignment in course:
        spec = assignments.get(assignment)
        types = {
            k: v for k, v in reference.namespace(assignment).items() if inspect.isclass(v)
        }  # the notebook's records (04's Turn), so its cases decode
        for fspec in spec.functions:
            inputs = evaluate.materialize(assignment, fspec, seeds.course_secret(None))
            inputs = [{k: v for k, v in inp.items() if k != "serve"} for inp in inputs]
            expected = memo.reference_outcomes(assignment, fspec, inputs)
            value = [
                i
                for i, case in enumerate(fspec.cases)
                if case.kind == "value" and "value" in expected[i]
            ]
            if not value:
                continue
            for where, (functions, ns) in candidates:
                for number, name, fn in functions:
                    run_ns = {**types, **ns}
                    if not _accepts(fn, inputs[value[0]], run_ns):
                        continue
                    if _reproduces(fn, inputs, expected, value, run_ns, fspec):
                        findings.append(
                            Finding(where, number, name, assignment, fspec.name, len(value))
                        )
    return findings


def _reproduces(fn, inputs, expected, value: list[int], ns: dict, fspec) -> bool:
    """Does ``fn`` give the expected outcome on every value case? Case by case, stopping at
    the first it misses; a call that exits or is interrupted by its own code counts as a miss
    (a scanned file's command-line function: it is not a reference)."""
    for i in value:
        try:
            with _quiet(), contextlib.redirect_stdout(io.StringIO()):
                (got,), _ = evaluate.run_cases(fn, [inputs[i]], ns, serve=False)
        except (SystemExit, Exception):  # noqa: BLE001
            return False
        if not same_outcome(expected[i], got, fspec.rtol, fspec.atol):
            return False
    return True


if __name__ == "__main__":
    # `python -m autograder.course.answer_key OUT.json FILE.py ...`: the files' findings, as a
    # JSON list written to OUT.json (not to stdout, which a scanned function may take over);
    # course_release runs it in a child, in a scratch folder
    found = [str(f) for f in scan([], files=tuple(Path(a) for a in sys.argv[2:]))]
    Path(sys.argv[1]).write_text(json.dumps(found), encoding="utf-8")
