"""`drills new-function`: the starting point of a new graded function, in every place it lives.

    drills new-function ASSIGNMENT NAME --points P [--params "x, y, eps=1e-8"] [--mistakes a,b,c,d,e]

writes, for a registered assignment (its first function too: docs/authoring.md, "A new
notebook"):

- five cells into the source notebook ``solutions/<id>/<id>.ipynb``, after the last graded
  function (the first one before the notebook's closing sections): the description
  (markdown), the solution cell (nbgrader ``solution: true``, ``grade_id`` NAME), the grading
  line (markdown, as ``drills cases`` prints it), the
  self-check (tagged ``self-check``) and the locked hidden-test cell (``grade: true``,
  ``grade_id`` test_NAME, the points);
- a ``FunctionSpec`` in the case module ``autograder/assignments/aNN_<name>.py`` with one case
  of each kind (a fixed value case, a generated one, an edge case, an invalid case), the
  mistakes (one unless ``--mistakes`` names them), two anchor placeholders, and the spec
  added to the module's ``SPEC``;
- a row per mistake in the notebook's common-mistakes table (the table too, if it has none);
- the function's Grading table and Known mistakes rows in CHANGELOG.md, and an entry;

and prints the checklist of what is left. Every placeholder is the text ``TODO(scaffold)``
(:data:`TODO`; in the case module the quoted string itself, so the module imports, the other
functions' tests keep running and nothing is imported for it); ``tests/test_scaffold.py`` fails
while one is left in the repository. ``drills cases ASSIGNMENT --grading-lines``
(:func:`sync_grading_lines`) rewrites the grading lines after a change of split, tolerance or
points.
"""

from __future__ import annotations

import ast
import datetime
import importlib.util
import json
import keyword
import re
import shutil
import subprocess
import sys
from pathlib import Path

from autograder import assignments
from autograder.assignments import catalogue
from autograder.cases.spec import DEFAULT_ATOL, DEFAULT_RTOL, DEFAULT_SPLIT, TODO, grading_line
from autograder.notebooks import nbjson, notebook

PLACES = ("solutions/", "autograder/assignments/", "CHANGELOG.md", "README.md")


class ScaffoldError(ValueError):
    """The function cannot be scaffolded here; the message says why."""


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _cell(kind: str, cell_id: str, source: str, metadata: dict | None = None) -> dict:
    if kind == "code":  # the key order of the course's notebooks (sorted, as Jupyter writes)
        return {
            "cell_type": kind,
            "execution_count": None,
            "id": cell_id,
            "metadata": metadata or {},
            "outputs": [],
            "source": _lines(source),
        }
    return {"cell_type": kind, "id": cell_id, "metadata": metadata or {}, "source": _lines(source)}


def parse_params(params: str | list[str]) -> list[str]:
    """The parameters as written (``"values, mask, eps=1e-8"``), one string each, checked by
    parsing them as a ``def``'s: names, with or without a default; no ``*args``/``**kwargs``
    (the grader passes each case's arguments by position)."""
    text = params if isinstance(params, str) else ", ".join(params)
    try:
        fn = ast.parse(f"def _({text}): pass").body[0]
    except SyntaxError as e:
        raise ScaffoldError(
            f"--params {text!r} is not a Python parameter list (names, each with an optional "
            f'default: "values, mask, eps=1e-8"): {e.msg}'
        ) from None
    a = fn.args
    if a.vararg or a.kwarg or a.posonlyargs or a.kwonlyargs:
        raise ScaffoldError(
            f"--params {text!r}: plain parameters only (no *, /, *args or **kwargs): the grader "
            "passes each case's arguments by position"
        )
    if not a.args:
        raise ScaffoldError("--params: at least one parameter")
    defaults = [None] * (len(a.args) - len(a.defaults)) + list(a.defaults)
    return [
        p.arg if d is None else f"{p.arg}={ast.get_source_segment(f'def _({text}): pass', d)}"
        for p, d in zip(a.args, defaults)
    ]


MISTAKE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def check_mistake_ids(mistakes: list[str]) -> None:
    """Refuse mistake ids the catalogue cannot use: an id is a letter or digit, then letters
    (either case), digits, ``-``, ``_`` or ``.``, as the existing catalogues write them
    (``divide-by-T``, ``final-minus-0.2``, ``eps-1e-4``). An id is quoted in the case module,
    in Markdown tables and in test ids, so no spaces, quotes, ``|``, ``,``, ``:`` or ``/``."""
    bad = [m for m in mistakes if not MISTAKE_ID.fullmatch(m)]
    if bad:
        raise ScaffoldError(
            f"mistake ids {bad} are not usable: an id starts with a letter or a digit and holds "
            "only letters, digits, '-', '_' and '.' (no spaces, quotes, '/', '|', ',' or ':'), "
            "e.g. divide-by-T, eps-1e-4"
        )
    twice = sorted({m for m in mistakes if mistakes.count(m) > 1})
    if twice:
        raise ScaffoldError(f"mistake ids must be distinct: {twice} given more than once")


def _required(params: list[str]) -> list[str]:
    """The parameters without a default: the ones every case passes."""
    return [p for p in params if "=" not in p]


def notebook_cells(assignment: str, name: str, points: float, params: list[str]) -> list[dict]:
    """The five cells of a graded function, with nbgrader metadata and stable ids."""
    sig = ", ".join(params)
    first = params[0].split("=")[0]
    slug = name.replace("_", "-")
    description = (
        f"## {TODO}: the section's title\n"
        "\n"
        f"Write `{name}({sig})`: {TODO}: what it returns, with its formula.\n"
        "\n"
        f"- {TODO}: the edge rule, in words the edge case's rule repeats.\n"
        f"- Raise `ValueError` with a message that says what is wrong when {first} is invalid "
        f"({TODO}: say which inputs are invalid).\n"
        "\n"
        f"{TODO}: a worked example (its numbers become the anchors and the self-check)."
    )
    solution = (
        f"def {name}({sig}):\n"
        f'    """{TODO}: one line: what {name} returns.\n'
        "\n"
        "    Args:\n"
        f"        {first}: {TODO}: type and shape.\n"
        "    Returns:\n"
        f"        {TODO}: type and shape.\n"
        "    Raises:\n"
        f"        ValueError: when {first} is invalid.\n"
        '    """\n'
        "    ### BEGIN SOLUTION\n"
        f'    raise NotImplementedError("{TODO}: the reference solution")\n'
        "    ### END SOLUTION\n"
    )
    line = grading_line(name, points, DEFAULT_SPLIT, (DEFAULT_RTOL, DEFAULT_ATOL))
    check = (
        "# Self-check (visible asserts; the hidden tests check more).\n"
        f'assert False, "{TODO}: assert {name} on the worked example"\n'
        f'print("{name}: self-check passed")\n'
    )
    test = (
        f"# Hidden tests: when your notebook is graded, `{name}` is checked here\n"
        "# on more cases, some of them generated. Nothing to do in this cell.\n"
        "### BEGIN HIDDEN TESTS\n"
        f'import autograder; autograder.grade_cell("{assignment}", "{name}", {name})\n'
        "### END HIDDEN TESTS"
    )
    return [
        _cell("markdown", f"md-{slug}", description),
        _cell(
            "code",
            f"code-{slug}",
            solution,
            {
                "nbgrader": {
                    "grade": False,
                    "grade_id": name,
                    "locked": False,
                    "schema_version": 3,
                    "solution": True,
                }
            },
        ),
        _cell("markdown", f"grading-{slug}", line),
        _cell("code", f"check-{slug}", check, {"tags": ["self-check"]}),
        _cell(
            "code",
            f"test-{slug}",
            test,
            {
                "deletable": False,
                "editable": False,
                "nbgrader": {
                    "grade": True,
                    "grade_id": f"test_{name}",
                    "locked": True,
                    "points": int(points) if float(points).is_integer() else points,
                    "schema_version": 3,
                    "solution": False,
                },
            },
        ),
    ]


def spec_constant(name: str, module_text: str) -> str:
    """The FunctionSpec's name in the case module: NAME in capitals, as the others are named,
    or NAME_SPEC when the module already binds that name."""
    const = name.upper()
    return f"{const}_SPEC" if re.search(rf"^{const}\b", module_text, re.M) else const


def case_module_entry(name: str, params: list[str], mistakes: list[str], const: str) -> str:
    """The FunctionSpec of a new function, with one case of each kind and two anchors."""
    required = _required(params)
    todo = f'"{TODO}"'  # the placeholder as a literal: grep finds it, nothing to import
    todo_args = "(" + ", ".join(todo for _ in required) + ("," if len(required) == 1 else "") + ")"
    sig = ", ".join(params)
    first = params[0].split("=")[0]
    mistake_text = "".join(
        f"""        Mistake(
            "{m}",
            "{TODO}: you did …; do … instead (second person: what was done, what to change)",
            {_mistake_way(m, sig, todo)}
            source=NO_SOURCE,  # {TODO}: "<where>: <what it shows>", or keep NO_SOURCE
        ),
"""
        for m in mistakes
    )
    return f'''

# -- {name} (scaffolded by `drills new-function`; fill every TODO, docs/authoring.md) ---------


def _{name}_inputs(rng):
    """{TODO}: a tuple of {name}'s positional arguments drawn from ``rng`` (numpy Generator)."""
    return {todo_args}


{const} = FunctionSpec(
    "{name}",
    cases=(
        Case("example", {todo_args}, note="{TODO}: the worked example"),
        Case("random", make=_{name}_inputs, note="{TODO}: what the generated inputs are"),
        Case(
            "edge",
            {todo_args},
            kind="edge",
            note="{TODO}: what the edge case checks",
            rule="{TODO}: the edge rule, in words the edge case's rule repeats",
        ),
        Case(
            "invalid",
            {todo_args},
            raises=ValueError,
            note="{TODO}: which invalid input raises ValueError",
            rule="{first} is invalid",
        ),
    ),
    mistakes=(
{mistake_text}    ),
    # Independent anchors: the value computed by hand (show the computation in a comment) or
    # taken from the paper or the worked example, and where it comes from. Never the reference.
    anchors={{
        "example": ({todo}, "{TODO}: where the value comes from"),
        "edge": ({todo}, "{TODO}: where the value comes from"),
    }},
)
'''


def _mistake_way(mistake: str, sig: str, todo: str) -> str:
    """How the scaffold writes a mistake: ``unchecked=True`` for a validation mistake (an id
    ``no-validation``, ``no-checks`` or ending in ``-unchecked``: the reference without its input
    checks, as docs/authoring.md step 6 says), else a ``formula=`` placeholder."""
    if mistake in ("no-validation", "no-checks") or mistake.endswith("-unchecked"):
        return "unchecked=True,  # the reference without its input checks"
    return f"formula=lambda {sig}: {todo},  # the wrong computation, on valid inputs"


def _ruff() -> list[str] | None:
    """How to run ruff here: this Python's ``-m ruff`` when the package is installed (so a
    ``drills`` run from the virtualenv without activating it finds it), else ``ruff`` on PATH."""
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    found = shutil.which("ruff")
    return [found] if found else None


def format_python(path: Path, root: Path) -> list[str]:
    """Sort the imports of ``path`` and format it as ``make lint`` wants (``ruff check`` and
    ``ruff format --check``). Returns nothing when done, else the checklist's lines that say
    which command to run (ruff missing or failing)."""
    rel = path.relative_to(root)
    todo = [
        f"  Before `make lint`: {rel} is not formatted yet; run, from the checkout's root:",
        f"          ruff check --fix --select I {rel} && ruff format {rel}",
    ]
    ruff = _ruff()
    if ruff is None:
        return [*todo, '          (ruff is a dev tool: pip install -e ".[dev]")']
    for args in (["check", "-q", "--fix", "--select", "I"], ["format", "-q"]):
        done = subprocess.run([*ruff, *args, str(path)], cwd=root, capture_output=True, text=True)
        if done.returncode != 0:
            return [
                *todo,
                f"          (ruff {args[0]} said: {(done.stdout + done.stderr).strip()})",
            ]
    return []


def _offset(text: str, lineno: int, col: int) -> int:
    """The character offset of an ast position (1-based line, 0-based utf-8 column)."""
    lines = text.splitlines(keepends=True)
    line = lines[lineno - 1] if lineno <= len(lines) else ""
    return sum(len(x) for x in lines[: lineno - 1]) + len(line.encode()[:col].decode())


def _add_to_spec_tuple(text: str, const: str) -> str:
    """``SPEC = AssignmentSpec(id, (A, B))`` with ``const`` added: ``(A, B, const)``, or
    ``(const,)`` when the assignment has no function yet."""
    tree = ast.parse(text)
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "SPEC" for t in node.targets)
            and isinstance(node.value, ast.Call)
            and len(node.value.args) == 2
            and isinstance(node.value.args[1], ast.Tuple)
        ):
            tup = node.value.args[1]
            end = _offset(text, tup.end_lineno, tup.end_col_offset) - 1  # the closing ")"
            if not tup.elts:
                start = _offset(text, tup.lineno, tup.col_offset)
                return text[:start] + f"({const},)" + text[end + 1 :]
            before = text[:end].rstrip()
            joiner = " " if before.endswith(",") else ", "
            return before + joiner + const + text[end:]
    raise ScaffoldError(
        "the case module has no `SPEC = AssignmentSpec(id, (...))` to add to: end it with "
        'SPEC = AssignmentSpec("<id>", ()) (docs/authoring.md, "A new notebook")'
    )


SPEC_NAMES = ("NO_SOURCE", "Case", "FunctionSpec", "Mistake")  # what the scaffolded entry uses


def _import_spec_names(text: str, names=SPEC_NAMES) -> str:
    """The module with ``names`` imported from autograder.cases.spec, each once: added to its
    ``from autograder.cases.spec import`` line, or a new line when it has none."""
    tree = ast.parse(text)
    found = [
        n
        for n in tree.body
        if isinstance(n, ast.ImportFrom) and n.module == "autograder.cases.spec" and not n.level
    ]
    have = {a.asname or a.name for n in found for a in n.names}
    missing = [x for x in names if x not in have]
    if not missing:
        return text
    if found and not any(a.asname for a in found[0].names):
        node = found[0]
        both = sorted({a.name for a in node.names} | set(missing), key=_isort_key)
        start = _offset(text, node.lineno, node.col_offset)
        end = _offset(text, node.end_lineno, node.end_col_offset)
        return text[:start] + f"from autograder.cases.spec import {', '.join(both)}" + text[end:]
    line = f"from autograder.cases.spec import {', '.join(sorted(missing, key=_isort_key))}\n"
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    at = _offset(text, imports[-1].end_lineno + 1, 0) if imports else 0
    return text[:at] + ("\n" if imports else "") + line + text[at:]


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's order of imported names: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


CLOSING_SECTIONS = ("## Explore", "## In the field", "## Common mistakes", "## Check my work")
COMMON_MISTAKES = (
    "## Common mistakes\n\nThe hidden tests recognise each of these and name it in your feedback:\n"
    "\n| function | mistake | what happens | feedback id |\n|---|---|---|---|"
)


def _heading(cell: dict) -> str:
    return "".join(cell["source"]).lstrip() if cell["cell_type"] == "markdown" else ""


def insertion_index(cells: list[dict]) -> int:
    """Where a new function's five cells go: after the last hidden-test cell; in a notebook with
    no graded function yet, before its first closing section (a markdown cell that starts with
    one of :data:`CLOSING_SECTIONS`), else at its end."""
    tests = [i for i, c in enumerate(cells) if notebook.cell_role(nbjson.node(c)) == "test"]
    if tests:
        return tests[-1] + 1
    closing = [i for i, c in enumerate(cells) if _heading(c).startswith(CLOSING_SECTIONS)]
    return closing[0] if closing else len(cells)


def common_mistakes_cell(cells: list[dict]) -> dict:
    """The markdown cell of the notebook's ``## Common mistakes`` table; written (before
    ``## Check my work``, else at the end) when the notebook has none yet, and its table's
    header when the section has no table."""
    cell = next((c for c in cells if "## Common mistakes" in _heading(c)), None)
    if cell is None:
        at = next(
            (i for i, c in enumerate(cells) if _heading(c).startswith("## Check my work")),
            len(cells),
        )
        cell = _cell("markdown", "md-common-mistakes", COMMON_MISTAKES)
        cells.insert(at, cell)
    md = "".join(cell["source"]).splitlines(keepends=True)
    s, e = _section_bounds(md, "Common mistakes")
    if not any(md[i].startswith("|") for i in range(s, e)):
        header = COMMON_MISTAKES.split("\n\n", 2)[2]
        text = "".join(md[:e]).rstrip("\n") + "\n\n" + header + "\n" + "".join(md[e:])
        cell["source"] = _lines(text.rstrip("\n"))
    return cell


def _insert_after_last(lines: list[str], start: int, stop: int, prefix: str, rows: list[str]):
    """Insert ``rows`` after the last line in lines[start:stop] that starts with ``prefix``
    (else after the table's last row)."""
    table = [i for i in range(start, stop) if lines[i].startswith("|")]
    if not table:
        raise ScaffoldError("no table found where the rows go")
    mine = [i for i in table if lines[i].startswith(prefix)]
    at = (mine or table)[-1] + 1
    if not lines[at - 1].endswith("\n"):  # the cell's last line (a table with no row yet)
        lines[at - 1] += "\n"
    lines[at:at] = rows


def _section_bounds(lines: list[str], title: str) -> tuple[int, int]:
    start = next(i for i, x in enumerate(lines) if x.startswith(f"## {title}"))
    stop = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return start, stop


def changelog_text(
    text: str, assignment: str, grading_row: str, mistake_row: str, name: str
) -> str:
    lines = text.splitlines(keepends=True)
    s, e = _section_bounds(lines, "Grading table")
    _insert_after_last(lines, s, e, f"| {assignment} |", [grading_row + "\n"])
    s, e = _section_bounds(lines, "Known mistakes")
    _insert_after_last(lines, s, e, f"| {assignment} |", [mistake_row + "\n"])
    s, _ = _section_bounds(lines, "Changes")
    today = datetime.date.today().isoformat()
    entry = (
        f"### {today} — {assignment}: a new graded function, `{name}` ({TODO}: why)\n\n"
        f"- {TODO}: what it grades, its points, its cases and mistakes (`drills cases "
        f"{assignment} --scores` prints their scores), and whether earlier scores move "
        "(a new function moves no earlier score of the other functions).\n\n"
    )
    lines[s + 2 : s + 2] = [entry]
    return "".join(lines)


def scaffold(
    assignment: str,
    name: str,
    points: float,
    params: str | list[str] | None = None,
    mistakes: list[str] | None = None,
    root: Path | None = None,
) -> list[str]:
    """Write the new function into every place it lives; return the checklist's lines."""
    root = root or notebook.course_root()
    params = parse_params(params or "x")
    mistakes = mistakes or ["todo-mistake"]
    if assignment not in assignments.MODULES:
        raise ScaffoldError(
            f"unknown assignment {assignment!r}; known: {', '.join(assignments.MODULES)}. "
            f"A new notebook is registered first: {assignment!r} in MODULES "
            "(autograder/assignments/__init__.py) and ASSIGNMENTS (autograder/notebooks/"
            'notebook.py), see docs/authoring.md, "A new notebook"'
        )
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
        raise ScaffoldError(f"{name!r} is not a public Python function name")
    if not points > 0:
        raise ScaffoldError("--points must be > 0")
    check_mistake_ids(mistakes)
    nb_path = notebook.source_path(assignment, root)
    module_path = root / "autograder" / "assignments" / f"{assignments.MODULES[assignment]}.py"
    changelog_path = root / "CHANGELOG.md"
    for path, what in (
        (nb_path, "the notebook's skeleton (title, story, setup cell, Check my work)"),
        (module_path, f'its case module, ending with SPEC = AssignmentSpec("{assignment}", ())'),
    ):
        if not path.is_file():
            raise ScaffoldError(
                f"{path.relative_to(root)} does not exist: create {what} first "
                '(docs/authoring.md, "A new notebook")'
            )
    if (
        name in notebook.solution_defs(assignment, root)
        or name in assignments.get(assignment).names
    ):
        raise ScaffoldError(f"{assignment} already has a function {name!r}")

    # 1. the notebook: five cells after the last test cell, and the common-mistakes rows
    raw = json.loads(nb_path.read_text(encoding="utf-8"))
    cells = raw["cells"]
    ids = {c.get("id") for c in cells}
    new = notebook_cells(assignment, name, points, params)
    clash = [c["id"] for c in new if c["id"] in ids]
    if clash:
        raise ScaffoldError(f"cell ids {clash} already exist in {nb_path.name}")
    at = insertion_index(cells)
    cells[at:at] = new
    table_cell = common_mistakes_cell(cells)
    md = "".join(table_cell["source"]).splitlines(keepends=True)
    s, e = _section_bounds(md, "Common mistakes")
    rows = [
        f"| {f'`{name}` ' if i == 0 else ''}| {TODO}: the mistake | {TODO}: what you get | `{m}` |\n"
        for i, m in enumerate(mistakes)
    ]
    _insert_after_last(md, s, e, "|", rows)
    table_cell["source"] = _lines("".join(md).rstrip("\n"))
    nb_path.write_text(json.dumps(raw, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

    # 2. the case module: the FunctionSpec, added to SPEC
    text = module_path.read_text(encoding="utf-8")
    const = spec_constant(name, text)
    spec_at = re.search(r"^SPEC = AssignmentSpec\(", text, re.M)
    if not spec_at:
        raise ScaffoldError(f"{module_path.name} has no `SPEC = AssignmentSpec(` line")
    text = (
        text[: spec_at.start()].rstrip("\n")
        + "\n"
        + case_module_entry(name, params, mistakes, const)
        + "\n\n"
        + text[spec_at.start() :]
    )
    text = _add_to_spec_tuple(text, const)
    text = _import_spec_names(text)
    module_path.write_text(text, encoding="utf-8")
    unformatted = format_python(module_path, root)

    # 3. CHANGELOG.md: the rows of the function as the code now has it, and an entry
    loader = importlib.util.spec_from_file_location(f"_scaffolded_{module_path.stem}", module_path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    fspec = module.SPEC.function(name)
    changelog_path.write_text(
        changelog_text(
            changelog_path.read_text(encoding="utf-8"),
            assignment,
            catalogue.grading_row(assignment, fspec, points),
            catalogue.mistake_row(assignment, fspec),
            name,
        ),
        encoding="utf-8",
    )

    rel = lambda p: p.relative_to(root)  # noqa: E731
    return [
        f"Scaffolded `{name}` ({points:g} points) in {assignment}. What is left, in the order of "
        "docs/authoring.md (every placeholder reads TODO(scaffold)):",
        f"  1. {rel(nb_path)}: the description, the docstring, the reference between "
        "### BEGIN SOLUTION and ### END SOLUTION, the self-check's asserts "
        f"(cells md-, code-, check-{name.replace('_', '-')}).",
        f"  2. {rel(module_path)}, {const}: the cases' inputs and notes, more value cases "
        "(fixed and generated), the edge and invalid cases of every rule the description "
        "states (their rule= words must be in the description). The grading line (cell "
        f"grading-{name.replace('_', '-')}) states the default split and tolerance: after you "
        f"change split=, rtol=, atol= or the points, run drills cases {assignment} "
        "--grading-lines (it rewrites the line).",
        "  3. Two anchors or more: values computed by hand or taken from the paper, with where "
        "they come from (never the reference's output).",
        f"  4. The mistakes ({', '.join(mistakes)}): formula=, diagnosis, source=; at least five "
        "(--mistakes a,b,c,d,e scaffolds them all); their rows in the notebook's Common "
        "mistakes table.",
        "  5. CHANGELOG.md: the entry's why; once the cases are final, the Grading table row, "
        "and the Known mistakes row if you add or rename a mistake (python tests/test_changelog.py "
        f"prints both as the code has them; drills cases {assignment} --scores the scores). "
        "A new notebook's functions share one entry: merge this one into it.",
        f"  6. Run: grep -rn 'TODO(scaffold)' {' '.join(PLACES)}",
        f"          python -m pytest -q -p no:cacheprovider tests/test_cases.py tests/test_anchors.py "
        f"tests/test_rules.py tests/test_changelog.py tests/test_scaffold.py -k '{name} or "
        f"{assignment} or changelog or placeholder'",
        f"          python benchmarks/mutation_score.py {assignment} {name} --survivors",
        f"          drills cases {assignment} --scores && drills release {assignment}",
        f"  7. Then every check of this notebook, in one command (drills author-check {assignment}"
        " --fast: seconds; without --fast minutes: it also mutates, executes the notebook and "
        "runs nbgrader):",
        f"          drills author-check {assignment}      (or: make check A={assignment})",
        *unformatted,
    ]


def sync_grading_lines(assignment: str, root: Path | None = None, write: bool = True) -> list[str]:
    """Rewrite the grading line under each graded function of the source notebook as the case
    module and the test cell now have it (points, split, tolerance): after a change of
    ``FunctionSpec(rtol=, atol=, split=)`` or of the points. Returns the functions whose line
    changed (with ``write=False``, those whose line is stale, and writes nothing)."""
    root = root or notebook.course_root()
    nb_path = notebook.source_path(assignment, root)
    raw = json.loads(nb_path.read_text(encoding="utf-8"))
    cells = raw["cells"]
    changed = []
    for f in assignments.get(assignment).functions:
        i = next(
            (
                k
                for k, c in enumerate(cells)
                if notebook.cell_role(nbjson.node(c)) == "solution"
                and re.search(rf"^def {f.name}\(", "".join(c["source"]), re.M)
            ),
            None,
        )
        if i is None:
            raise ScaffoldError(f"{nb_path.name}: no solution cell defines {f.name}")
        points = next(  # read here, not through notebook.points' cache: they may have changed
            (
                float(m["points"])
                for c in cells
                if notebook.cell_role(nbjson.node(c)) == "test"
                and (m := notebook.nbgrader_meta(nbjson.node(c))).get("grade_id")
                == f"test_{f.name}"
            ),
            None,
        )
        if points is None:
            raise ScaffoldError(f"{nb_path.name}: no hidden-test cell test_{f.name}")
        want = grading_line(f.name, points, f.split, (f.rtol, f.atol))
        below = cells[i + 1] if i + 1 < len(cells) else None
        text = "".join(below["source"]) if below and below["cell_type"] == "markdown" else None
        if text is not None and want in text:
            continue
        changed.append(f.name)
        stale = re.compile(rf"^\*\*How `{f.name}` is graded\*\*.*$", re.M)
        m = stale.search(text) if text is not None else None
        if m:
            below["source"] = _lines(text[: m.start()] + want + text[m.end() :])
        else:  # no grading line under the solution: a cell of its own
            cell_id = f"grading-{f.name.replace('_', '-')}"
            if cell_id in {c.get("id") for c in cells}:
                raise ScaffoldError(
                    f"{nb_path.name}: cell {cell_id} is not right under {f.name}'s solution "
                    "cell; move it there"
                )
            cells.insert(i + 1, _cell("markdown", cell_id, want))
    if changed and write:
        nb_path.write_text(json.dumps(raw, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return changed


# -- drills new-notebook ---------------------------------------------------------------------

NOTEBOOK_ID = re.compile(r"(\d\d)_[a-z][a-z0-9_]*")
BINDER = "https://mybinder.org/v2/gh/reward-drills/reward-drills/HEAD?urlpath=lab/tree/"


def warm_up_source(assignment: str) -> str:
    """Every notebook's first code cell: the Check my work button's server starts before the
    notebook's imports, so its own start-up (the grader's imports, the reference outcomes,
    the sandbox importing numpy and torch) runs beside theirs, and the first click finds it
    ready (docs/speed.md)."""
    return (
        "# Check my work's grader starts now, in the background, while this notebook's imports run\n"
        "# (in JupyterLab only: nbgrader and nbclient skip it), so that your first check is quick.\n"
        "from autograder.widgets import warm_up\n"
        "\n"
        f'warm_up("{assignment}")'
    )


def skeleton_cells(assignment: str, title: str) -> list[dict]:
    """A new notebook with no graded function yet, following every rule of
    :mod:`autograder.notebooks.layout`: title, story, setup cell, an exploration with a figure
    and a widget, and the closing sections. Every placeholder reads TODO(scaffold); the code
    cells run as they are."""
    number = assignment.split("_")[0]
    setup_meta = {
        "deletable": False,
        "editable": False,
        "nbgrader": {
            "grade": False,
            "grade_id": "setup_imports",
            "locked": True,
            "schema_version": 3,
            "solution": False,
        },
    }
    return [
        _cell(
            "markdown",
            "md-title",
            f"# {number} · {title}\n\n"
            f"**Difficulty: {TODO}: n/5 · about {TODO}: minutes**\n\n"
            f"**What you will learn**\n- {TODO}: one line per idea.\n\n"
            f"Prerequisite: {TODO}: the notebooks this one builds on.",
        ),
        _cell(
            "markdown",
            "md-story",
            f"## The story\n\n{TODO}: the problem this notebook's functions solve, with its "
            "source (paper, library, issue) and the numbers the worked examples use.",
        ),
        _cell("code", "code-warm-up", warm_up_source(assignment)),
        _cell("code", "code-setup", "import math\n\nimport numpy as np", setup_meta),
        _cell(
            "markdown",
            "md-explore",
            f"## Explore: {TODO}: what the learner watches\n\n{TODO}: what the figure and the "
            "widget below show, computed with the learner's own functions.",
        ),
        _cell(
            "code",
            "code-explore-figure",
            "import matplotlib.pyplot as plt\n\n"
            f"# {TODO}: a figure computed with this notebook's functions\n"
            "xs = np.linspace(0.0, 1.0, 11)\n"
            "fig, ax = plt.subplots(figsize=(5, 3))\n"
            "ax.plot(xs, xs**2)\n"
            'ax.set_xlabel("x")\n'
            "plt.show()",
        ),
        _cell(
            "code",
            "code-explore-widget",
            "from ipywidgets import interact\n\n\n"
            f"def show(x=0.5):  # {TODO}: what the slider changes\n"
            '    print(f"x = {x:.2f}")\n\n\n'
            "interact(show, x=(0.0, 1.0, 0.05));",
        ),
        _cell(
            "markdown",
            "md-in-the-field",
            f"## In the field\n\n- {TODO}: where the field "
            "computes this, and how (library, file, what it does differently).",
        ),
        _cell("markdown", "md-common-mistakes", COMMON_MISTAKES),
        _cell(
            "markdown",
            "md-check-my-work",
            "## Check my work\n\nSave the notebook (Ctrl+S), then press the button: it grades the "
            "saved file with the same hidden\ncases as your instructor's grader and shows your "
            "score and feedback here. It changes nothing.",
        ),
        _cell(
            "code",
            "code-check-my-work",
            f'from autograder.widgets import check_my_work\n\ncheck_my_work("{assignment}")',
        ),
    ]


def _register(text: str, anchor: str, line: str, where: str) -> str:
    """``text`` with ``line`` added as the last entry of the literal that ``anchor`` opens."""
    start = text.find(anchor)
    if start < 0:
        raise ScaffoldError(f"{where}: no `{anchor.strip()}` to register the notebook in")
    end = text.index("\n)" if anchor.endswith("(\n") else "\n}", start)
    return text[: end + 1] + line + text[end + 1 :]


def new_notebook(assignment: str, title: str, root: Path | None = None) -> list[str]:
    """Create and register a notebook with no graded function: its skeleton in solutions/,
    its case module, its id in ASSIGNMENTS and MODULES, a README row, a CHANGELOG entry.
    Returns the checklist's lines. Nothing is written when a check fails."""
    root = root or notebook.course_root()
    m = NOTEBOOK_ID.fullmatch(assignment)
    if not m:
        raise ScaffoldError(
            f"{assignment!r}: a notebook id is two digits, '_' and a lower-case name (08_gae)"
        )
    if not title.strip():
        raise ScaffoldError(
            "--title: the notebook's title, e.g. 'Generalised advantage estimation'"
        )
    taken = [a for a in notebook.ASSIGNMENTS if a == assignment or a[:2] == m[1]]
    if taken or assignment in assignments.MODULES:
        raise ScaffoldError(f"notebook number {m[1]} is taken: {taken or [assignment]}")
    module = f"a{assignment}"
    nb_path = notebook.source_path(assignment, root)
    module_path = root / "autograder" / "assignments" / f"{module}.py"
    nb_registry = root / "autograder" / "notebooks" / "notebook.py"
    modules_registry = root / "autograder" / "assignments" / "__init__.py"
    readme, changelog = root / "README.md", root / "CHANGELOG.md"
    for p in (nb_path, module_path):
        if p.exists():
            raise ScaffoldError(f"{p.relative_to(root)} exists already")

    registry_text = _register(
        nb_registry.read_text(encoding="utf-8"),
        "ASSIGNMENTS = (\n",
        f'    "{assignment}",\n',
        "autograder/notebooks/notebook.py",
    )
    modules_text = _register(
        modules_registry.read_text(encoding="utf-8"),
        "MODULES = {\n",
        f'    "{assignment}": "{module}",\n',
        "autograder/assignments/__init__.py",
    )
    readme_text = readme.read_text(encoding="utf-8") if readme.is_file() else None
    if readme_text is not None:
        rel = f"exercises/{assignment}/{assignment}.ipynb"
        row = (
            f"| {m[1]} | [{title}]({rel}) | {TODO}: what the learner writes | {TODO}: n/5, "
            f"N min | [launch]({BINDER}{rel}) |\n"
        )
        lines = readme_text.splitlines(keepends=True)
        rows = [i for i, x in enumerate(lines) if re.match(r"\| \d\d \| \[", x)]
        if not rows:
            raise ScaffoldError("README.md has no notebook table to add the row to")
        lines.insert(rows[-1] + 1, row)
        readme_text = "".join(lines)
    log = changelog.read_text(encoding="utf-8")
    lines = log.splitlines(keepends=True)
    s, _ = _section_bounds(lines, "Changes")
    lines[s + 2 : s + 2] = [
        f"### {datetime.date.today().isoformat()} — {assignment}: a new notebook, {title} "
        f"({TODO}: why)\n\n- {TODO}: its functions, points, cases and mistakes (merge the "
        "entries `drills new-function` writes for each function into this one).\n\n"
    ]

    nb = {
        "cells": skeleton_cells(assignment, title),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    nb_path.parent.mkdir(parents=True, exist_ok=True)
    nb_path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    module_path.write_text(
        f'"""{assignment}: cases and known mistakes of {title} ({TODO}: what the inputs are, '
        'their tolerance)."""\n\n'
        "from __future__ import annotations\n\n"
        "from autograder.cases.spec import AssignmentSpec\n\n"
        f'SPEC = AssignmentSpec("{assignment}", ())\n',
        encoding="utf-8",
    )
    nb_registry.write_text(registry_text, encoding="utf-8")
    modules_registry.write_text(modules_text, encoding="utf-8")
    if readme_text is not None:
        readme.write_text(readme_text, encoding="utf-8")
    changelog.write_text("".join(lines), encoding="utf-8")
    rel = lambda p: p.relative_to(root)  # noqa: E731
    return [
        f"Created notebook {assignment} ({title}), registered in ASSIGNMENTS and MODULES:",
        f"  {rel(nb_path)}: the skeleton (title, story, setup, an exploration with a figure and "
        "a widget, In the field, Common mistakes, Check my work); every placeholder reads "
        "TODO(scaffold)",
        f"  {rel(module_path)}: SPEC with no function yet",
        "  README.md: its row in the notebook table; CHANGELOG.md: its entry",
        "Next:",
        f"  drills new-function {assignment} NAME --points P --params '…' --mistakes a,b,c,d,e",
        "  (for each function; then docs/authoring.md steps 2 to 9)",
        f"  drills release {assignment}",
        f"  drills author-check {assignment}   (the notebook's rules included)",
    ]
