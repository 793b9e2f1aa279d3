"""The autograder's folders are its layers: no import runs up a layer or round a cycle.

The layers, bottom to top, are listed in ``autograder/__init__.py``; LAYERS below is the same
list. Every import counts: at module level, inside a function (a lazy import still depends on
what it imports) and under ``TYPE_CHECKING``. tiny_model sits beside the course: it may use
the notebooks layer (the learner's own functions, through its seam) and nothing of the
autograder may import it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# package (or top-level module) -> layer; a module belongs to the longest prefix listed here
LAYERS = {
    "autograder.notebooks": 1,
    "autograder.cases": 2,
    "autograder.assignments": 3,
    "autograder.scoring": 4,
    "autograder.engine": 5,
    "autograder.course": 6,
    "autograder.cli": 7,
    "autograder.widgets": 7,
    "autograder": 7,  # the package's __init__: the table of contents and grade_cell
    "tiny_model": 2,  # above the notebooks it reads the learner's functions from
}


def module_files(packages=("autograder", "tiny_model")) -> dict[str, Path]:
    out = {}
    for pkg in packages:
        for p in sorted((REPO / pkg).rglob("*.py")):
            parts = list(p.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = p
    return out


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that the module ``name`` (file ``path``) imports, anywhere in it."""
    is_pkg = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = name.split(".")[: len(name.split(".")) - node.level + (1 if is_pkg else 0)]
                base = ".".join(up + ([base] if base else []))
            # `from pkg import mod` imports pkg.mod; `from mod import name` imports mod
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    known = set(files)
    # a package's __init__ also runs when one of its modules is imported: that is what
    # test_importing_a_layer_loads_nothing_above_it checks at run time
    return {n: imports_of(n, p, known) for n, p in files.items()}


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        prefix = ".".join(parts[:k])
        if prefix in LAYERS:
            return LAYERS[prefix]
    return None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of two or more modules (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Each import from a module to one in a higher layer, as 'a (layer i) -> b (layer j)'."""
    out = []
    for a, deps in sorted(graph.items()):
        for b in sorted(deps):
            la, lb = layer_of(a), layer_of(b)
            if a.startswith("autograder") and b.startswith("tiny_model"):
                out.append(f"{a} (layer {la}) -> {b}: the autograder never imports tiny_model")
            elif la is not None and lb is not None and lb > la:
                out.append(f"{a} (layer {la}) -> {b} (layer {lb})")
    return out


# -- the checks, on the real code ----------------------------------------------------------------


def test_every_module_belongs_to_a_layer():
    """Was a module added outside the layers (a new top-level package nobody placed)?"""
    lost = [m for m in module_files() if layer_of(m) is None]
    assert lost == [], f"modules in no layer (add their package to LAYERS and the ToC): {lost}"


def test_no_import_runs_up_a_layer():
    """Does a lower layer import a higher one (scoring importing the course, cases the scoring)?"""
    bad = upward(import_graph())
    assert bad == [], "imports that run up a layer:\n" + "\n".join(bad)


def test_no_import_cycle():
    """Do two modules import each other, directly or round a longer path (lazy imports too)?"""
    found = cycles(import_graph())
    assert found == [], f"import cycles: {found}"


def test_the_table_of_contents_lists_every_package_in_its_layer():
    """Does autograder/__init__.py's table of contents name each package, in layer order?"""
    import autograder

    doc = autograder.__doc__
    order = ["notebooks/", "cases/", "assignments/", "scoring/", "engine/", "course/"]
    at = [doc.find(p) for p in order]
    assert -1 not in at, f"packages missing from the table of contents: {order}"
    assert at == sorted(at), "the table of contents lists the packages out of layer order"
    for pkg in order:
        assert LAYERS["autograder." + pkg.rstrip("/")] == order.index(pkg) + 1


@pytest.mark.parametrize("layer", [1, 2, 3, 4, 5])
def test_importing_a_layer_loads_nothing_above_it(layer):
    """At run time, does importing every module of a layer pull in a higher layer (through a
    package __init__ or the root package, which the static check does not follow)?"""
    mods = [m for m in module_files(("autograder",)) if layer_of(m) == layer]
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}:\n"
        "    importlib.import_module(m)\n"
        "print('\\n'.join(m for m in sys.modules if m.startswith('autograder')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.split()
    above = [m for m in out if (layer_of(m) or 0) > layer and m != "autograder"]
    assert above == [], f"importing layer {layer} loaded higher layers: {above}"


# -- the checks catch what they promise to (planted graphs) ------------------------------------


def test_a_planted_cycle_is_found():
    """Would spec -> mutation -> evaluate -> spec (the cycle this layout removed) be caught?"""
    graph = {
        "autograder.cases.spec": {"autograder.scoring.mutation"},
        "autograder.scoring.mutation": {"autograder.scoring.evaluate"},
        "autograder.scoring.evaluate": {"autograder.cases.spec"},
        "autograder.cases.seeds": set(),
    }
    assert cycles(graph) == [
        ["autograder.cases.spec", "autograder.scoring.evaluate", "autograder.scoring.mutation"]
    ]
    assert upward(graph) == [
        "autograder.cases.spec (layer 2) -> autograder.scoring.mutation (layer 4)"
    ]


def test_a_planted_upward_import_and_a_tiny_model_import_are_found():
    """Would report -> grade_cli (course to course is fine) pass, and sandbox -> report
    (engine to course) or the autograder importing tiny_model be caught?"""
    graph = {
        "autograder.course.report": {"autograder.course.grade_cli"},
        "autograder.engine.sandbox": {"autograder.course.report"},
        "autograder.scoring.evaluate": {"tiny_model.model"},
    }
    found = upward(graph)
    assert found == [
        "autograder.engine.sandbox (layer 5) -> autograder.course.report (layer 6)",
        "autograder.scoring.evaluate (layer 4) -> tiny_model.model: the autograder never imports tiny_model",
    ]


def test_lazy_and_type_checking_imports_count(tmp_path):
    """Is an import inside a function or under TYPE_CHECKING seen as a dependency?"""
    f = tmp_path / "m.py"
    f.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from autograder.course.report import Row\n"
        "def g():\n    from autograder.scoring import cache\n"
    )
    known = {"autograder.course.report", "autograder.scoring.cache", "autograder.scoring"}
    assert imports_of("autograder.engine.x", f, known) == {
        "autograder.course.report",
        "autograder.scoring.cache",
    }
