"""Reading source notebooks: where they are, what each cell is, how many points.

Cell roles come from nbgrader metadata:

    setup     locked, not graded, grade_id starting with "setup" (imports, provided types)
    solution  nbgrader "solution": true (the graded function; nbgrader stubs it)
    test      nbgrader "grade": true, not a solution (the hidden-test call)
    other     story, self-checks, exploration
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from autograder.notebooks import course_values, nbjson

ASSIGNMENTS = (
    "01_exact_kl",
    "02_clipped_estimators",
    "03_sum_vs_mean",
    "04_rlef_turn_rewards",
    "05_grpo_lld",
    "06_nthr",
    "07_beyond_nthr",
)


def course_root() -> Path:
    """The repository (course directory): $DRILLS_COURSE_ROOT or the folder above this package.

    In the course form (an installed course wheel: course_values) there is no repository: the
    root is the folder of the values bundles, and :func:`source` reads each notebook's outline
    from its bundle."""
    env = os.environ.get("DRILLS_COURSE_ROOT")
    root = Path(env) if env else Path(__file__).resolve().parents[2]
    if not env and not (root / "solutions").is_dir() and course_values.active():
        return course_values.VALUES
    if not (root / "solutions").is_dir():
        raise FileNotFoundError(
            f"no solutions/ folder under {root}: install reward-drills from a clone "
            "(pip install -e .) or set DRILLS_COURSE_ROOT to the repository"
        )
    return root


def source_path(assignment: str, root: Path | None = None) -> Path:
    """The source notebook; in the course form, the notebook's values bundle (:func:`source`
    reads its outline: the bundle is not a notebook)."""
    root = root or course_root()
    if course_values.active(root):
        return root / f"{assignment}.json"
    return root / "solutions" / assignment / f"{assignment}.ipynb"


def source(assignment: str, root: Path | None = None) -> nbjson.Node:
    """The source notebook of ``assignment``; in the course form its outline (setup cells as
    they are, solution cells as the signatures they define: course_values), which the layout
    code (cells, grade_ids, points, parameters, served callees) reads as it reads the source."""
    root = root or course_root()
    if course_values.active(root):
        return course_values.source(assignment)
    return read(source_path(assignment, root))


def release_path(assignment: str, root: Path | None = None) -> Path:
    root = root or course_root()
    return root / "exercises" / assignment / f"{assignment}.ipynb"


def available_assignments(root: Path | None = None) -> list[str]:
    root = root or course_root()
    if course_values.active(root):
        return [a for a in ASSIGNMENTS if a in course_values.assignments()]
    return [a for a in ASSIGNMENTS if source_path(a, root).is_file()]


def nbgrader_meta(cell) -> dict:
    """The cell's nbgrader metadata; ``{}`` when it is absent or not an object (a hand-edited
    notebook: :func:`nbgrader_meta_problem` says what is wrong, in the learner's terms)."""
    meta = cell.get("metadata")
    m = meta.get("nbgrader") if isinstance(meta, dict) else None
    return dict(m) if isinstance(m, dict) else {}


def nbgrader_meta_problem(cell, number: int) -> str | None:
    """A sentence for a learner when cell ``number`` (1-based) has nbgrader metadata that is
    not the object nbgrader wrote (the cell is then treated as an ordinary cell)."""
    meta = cell.get("metadata")
    if not isinstance(meta, dict) or "nbgrader" not in meta or isinstance(meta["nbgrader"], dict):
        return None
    return (
        f"cell {number}'s nbgrader metadata is {nbjson.json_type(meta['nbgrader'])}; it must be the "
        "object nbgrader wrote, so the cell was read as an ordinary cell (if it held your "
        "solution, re-download the notebook or copy your code into a fresh copy)"
    )


def cell_role(cell) -> str:
    if cell.get("cell_type") != "code":
        return "other"
    m = nbgrader_meta(cell)
    if m.get("solution"):
        return "solution"
    if m.get("grade"):
        return "test"
    if m.get("locked") and str(m.get("grade_id", "")).startswith("setup"):
        return "setup"
    return "other"


def read(path: Path) -> nbjson.Node:
    """A source notebook, validated against nbformat's v4 schema (without importing nbformat)."""
    return nbjson.read(path)


_POINTS_CACHE: dict[tuple[str, str], float] = {}


def points(assignment: str, function: str, root: Path | None = None) -> float:
    """Points of the test cell ``test_<function>`` in the source notebook."""
    key = (str(root), assignment + "/" + function)
    if key not in _POINTS_CACHE:
        nb = source(assignment, root)
        for cell in nb.cells:
            m = nbgrader_meta(cell)
            if cell_role(cell) == "test" and m.get("grade_id") == f"test_{function}":
                _POINTS_CACHE[key] = float(m["points"])
                break
        else:
            raise KeyError(f"{assignment}: no test cell with grade_id test_{function}")
    return _POINTS_CACHE[key]


def code_cells(nb, roles: set[str]) -> list[tuple[str, str, str]]:
    """(role, grade_id, source) of the code cells with the given roles, in order."""
    out = []
    for cell in nb.cells:
        role = cell_role(cell)
        if role in roles:
            out.append((role, str(nbgrader_meta(cell).get("grade_id", "")), cell.source))
    return out


def top_level_function_names(source: str) -> set[str]:
    """Names of the functions ``source`` defines at its top level (none if it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


_DEFS: dict[str, dict[str, ast.FunctionDef]] = {}


def solution_defs(assignment: str, root: Path | None = None) -> dict[str, ast.FunctionDef]:
    """Every top-level ``def`` of the source notebook's solution cells, by name (the last one
    of a name wins, as in a kernel that ran the cells in order); read once per notebook."""
    path = source_path(assignment, root)
    key = str(path)
    if key not in _DEFS:
        defs: dict[str, ast.FunctionDef] = {}
        for _, _, text in code_cells(source(assignment, root), {"solution"}):
            for node in ast.parse(text).body:
                if isinstance(node, ast.FunctionDef):
                    defs[node.name] = node
        _DEFS[key] = defs
    return _DEFS[key]


def parameters(assignment: str, function: str, root: Path | None = None) -> list[str]:
    """Names of the positional parameters of ``function`` in the source notebook's solution cells."""
    node = solution_defs(assignment, root).get(function)
    return [a.arg for a in node.args.posonlyargs + node.args.args] if node is not None else []
