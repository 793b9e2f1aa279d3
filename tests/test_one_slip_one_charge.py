"""One slip, one charge, for every function of every notebook, helpers included.

For each definition of each source notebook's solution cells (graded functions and helpers
alike), two submissions: the reference solution with that one definition broken by a syntax
error, and with it left as the exercise's stub. Graded in one `drills grade` run (warm
workers). The slip must cost points at exactly one graded function: the broken one itself,
or, for a helper, the graded function of the cell the notebook gives it in; every other
function (its callers included) keeps full marks, graded with the reference helper or
callee served by value (autograder.scoring.served). A function a notebook asks the learner to
bring from the notebook that grades it (04's copy of 03's mean_sampled_log_ratio) costs nothing
where it is copied.
"""

from __future__ import annotations

import ast
import json

import nbformat
import pytest
from class_fixture import cells_of, exercise_with
from conftest import ROOT, run_drills

from autograder import assignments
from autograder.engine import sandbox
from autograder.notebooks import notebook
from autograder.scoring import served

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sandbox.detect([]).mode == "none", reason="no sandbox here"),
]


def _slipped(source: str, name: str, how: str) -> str:
    """``source`` (a solution cell) with the def ``name`` broken: "syntax" (a line without its
    colon before the body) or "stub" (docstring, then raise NotImplementedError)."""
    node = next(n for n in ast.parse(source).body if getattr(n, "name", None) == name)
    lines = source.splitlines(keepends=True)
    first = node.body[0]
    indent = " " * first.col_offset
    if how == "syntax":
        at = first.lineno - 1
        return "".join(lines[:at] + [f"{indent}if True\n", f"{indent}    pass\n"] + lines[at:])
    has_doc = ast.get_docstring(node) is not None
    keep_to = first.end_lineno if has_doc else first.lineno - 1
    body = lines[:keep_to] + [f"{indent}raise NotImplementedError()\n"]
    return "".join(body + lines[node.end_lineno :])


def _variants():
    """Every definition with a syntax error; the stub of every definition another one calls
    (a stub of a function nothing calls can only cost that function: its own cases say so)."""
    for a in notebook.ASSIGNMENTS:
        src = notebook.read(notebook.source_path(a, ROOT))
        defs = notebook.solution_defs(a, ROOT)
        called = {
            n.id
            for d in defs.values()
            for n in ast.walk(d)
            if isinstance(n, ast.Name) and n.id in defs and n.id != d.name
        }
        for _, gid, source in notebook.code_cells(src, {"solution"}):
            for n in ast.parse(source).body:
                if isinstance(n, ast.FunctionDef):
                    yield a, gid, n.name, "syntax"
                    if n.name in called:
                        yield a, gid, n.name, "stub"


VARIANTS = list(_variants())


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("slips")
    sources = {}
    for a in notebook.ASSIGNMENTS:
        src = notebook.read(notebook.source_path(a, ROOT))
        sources[a] = {gid: s for _, gid, s in notebook.code_cells(src, {"solution"})}
    for k, (a, gid, name, how) in enumerate(VARIANTS):
        by_functions = {tuple(fs): g for g, fs in cells_of(a).items()}

        def cell(functions, a=a, gid=gid, name=name, how=how, by_functions=by_functions):
            g = by_functions[tuple(functions)]
            body = sources[a][g]
            return _slipped(body, name, how) if g == gid else body

        d = tmp / "submitted" / f"v{k:03d}" / a
        d.mkdir(parents=True)
        nbformat.write(exercise_with(a, cell), str(d / f"{a}.ipynb"))
    out = tmp / "out"
    proc = run_drills("grade", str(tmp), "--out", str(out), "--jobs", "2", "--timeout", "20")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {r["student"]: r for r in json.loads((out / "results.json").read_text())["submissions"]}


@pytest.mark.parametrize(
    "k", range(len(VARIANTS)), ids=[f"{a[:2]}-{n}-{h}" for a, _, n, h in VARIANTS]
)
def test_a_slip_in_one_definition_costs_only_its_own_function(graded, k):
    a, gid, name, how = VARIANTS[k]
    r = graded[f"v{k:03d}"]
    names = assignments.get(a).names
    scores = {f["function"]: (f["score"], f["points"], f) for f in r["functions"]}
    if name in served.provided_names(a):  # graded in another notebook: served, never charged
        lost = sorted(f for f, (s, p, _) in scores.items() if s < p)
        assert lost == [], f"a slip in the copy of {name}, graded elsewhere, cost {lost}"
        return
    owner = name if name in names else gid
    assert owner in names, f"{name} is in cell {gid}, which no graded function owns"
    lost = sorted(f for f, (s, p, _) in scores.items() if s < p)
    assert lost == [owner], {
        f: (s, p, fr.get("error"), fr.get("diagnosis")) for f, (s, p, fr) in scores.items()
    }
    text = json.dumps(scores[owner][2], ensure_ascii=False)
    if how == "syntax" and name == owner:
        assert "its definition does not compile" in text, text[:500]
    elif name != owner:
        assert f"`{name}`" in text, f"{owner}'s feedback does not name the broken helper {name}"
        assert f"charged once, to {owner}" in text, text[:500]


def test_a_broken_definition_leaves_the_definitions_beside_it_whole():
    """The cell is cut at its top-level statements: the def with the missing colon is the one
    run that does not compile; the helper before it (with a column-0 line inside its
    docstring) and the constant and def after it compile, with their lines where they were."""
    from autograder.engine import submission

    cell = (
        "def _h(x):\n"
        '    """A docstring with a line at column 0:\n'
        "def not_a_def\n"
        '    """\n'
        "    return x\n"
        "\n"
        "\n"
        "@staticmethod\n"
        "def f(x)\n"
        "    return _h(x)\n"
        "\n"
        "\n"
        "K = (1,\n"
        "     2)\n"
        "\n"
        "\n"
        "def g(x):\n"
        "    return x\n"
    )
    part, broken, said = submission.compilable_part(cell, "f", 3)
    assert list(broken) == ["f"] and "line 9" in broken["f"], broken
    assert "the definition of `f` does not compile" in said
    namespace: dict = {}
    exec(compile(part, "<part>", "exec"), namespace)  # noqa: S102 (our own text)
    assert {"_h", "K", "g"} <= set(namespace) and "f" not in namespace
    assert part.count("\n") == cell.count("\n")  # every line where it was


def test_a_huge_cell_that_does_not_compile_is_not_split():
    """Past the bounds (characters, top-level statements) the parent does not compile pieces
    of it: the cell is one run that does not compile, as a kernel sees it."""
    from autograder.engine import submission

    cell = "x = 1\n" * (submission.SPLIT_MAX_STARTS + 1) + "def f(:\n    pass\n"
    assert submission.split_definitions(cell) == [(0, cell.count("\n"), False)]
