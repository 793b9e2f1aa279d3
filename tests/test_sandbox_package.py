"""The sandbox is a package of modules, one per isolation mode plus what they share, behind one
facade (``autograder.engine.sandbox``). Splitting a module this way has a known trap: a test
that patches a name on the facade (``monkeypatch.setattr(sandbox, "library_dirs", ...)``)
replaces the facade's copy only, while the package's own code still calls the original at its
home module, so the test silently checks nothing. These checks read the code (no sandbox is
started): every patch on the facade must be of a name the package's own code never uses, every
name an importer reads from the facade must be there, and the facade's table of modules must
name each module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from autograder.engine import sandbox

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path(sandbox.__file__).parent
THIS = Path(__file__).resolve()  # its planted patches are examples, not patches
FACADE_IMPORT = "from autograder.engine import sandbox"
# monkeypatch.setattr(sandbox, "NAME", ...) and sandbox.NAME = ... (a hand-made patch)
PATCHES = re.compile(r"setattr\(\s*sandbox\s*,\s*[\"'](\w+)[\"']|^\s*sandbox\.(\w+)\s*=[^=]", re.M)


def _modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.glob("*.py"))}


def used_inside() -> dict[str, set[str]]:
    """name -> the package's modules whose code reads it (as a global of the module, or as an
    attribute of another module of the package: ``common.library_dirs``)."""
    out: dict[str, set[str]] = {}
    for mod, tree in _modules().items():
        if mod == "__init__":
            continue  # the facade's re-exports are not uses
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                out.setdefault(node.id, set()).add(mod)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                out.setdefault(node.attr, set()).add(mod)
    return out


def patches_missing_their_target(texts: dict[str, str]) -> list[str]:
    """Each patch on the facade, in ``texts`` (file name -> source), of a name the package's
    own code reads: a patch that the code it means to change never sees."""
    inside = used_inside()
    bad = []
    for name, text in sorted(texts.items()):
        if FACADE_IMPORT not in text:
            continue
        for m in PATCHES.finditer(text):
            attr = m[1] or m[2]
            if attr in inside:
                home = getattr(sandbox, attr, None)
                where = getattr(home, "__module__", "its home module")
                bad.append(
                    f"{name}: patches sandbox.{attr}, but the package's modules "
                    f"{sorted(inside[attr])} read it at its home; patch it there ({where})"
                )
    return bad


def _sources() -> dict[str, str]:
    out = {}
    for top in ("autograder", "tests", "benchmarks", "tools", "deploy", "tiny_model"):
        for p in sorted((REPO / top).rglob("*.py")):
            if PACKAGE not in p.parents and "fixtures" not in p.parts and p != THIS:
                out[str(p.relative_to(REPO))] = p.read_text(encoding="utf-8")
    return out


def test_every_patch_on_the_facade_reaches_the_code_that_uses_the_name():
    """Does a test patch a name on ``sandbox`` that the package's own modules call at its home
    (so that the patch changes nothing the test exercises)?"""
    bad = patches_missing_their_target(_sources())
    assert bad == [], "\n".join(bad)


def test_a_planted_patch_that_misses_is_found():
    """Would patching ``library_dirs`` on the facade (bubblewrap.py and launch.py call
    ``common.library_dirs``) be caught, and patching ``detect`` (called only from outside the
    package, through the facade) be allowed?"""
    planted = {
        "t.py": f"{FACADE_IMPORT}\n"
        "def test(monkeypatch):\n"
        '    monkeypatch.setattr(sandbox, "library_dirs", lambda: [])\n'
        '    monkeypatch.setattr(sandbox, "detect", lambda hidden: None)\n'
    }
    (found,) = patches_missing_their_target(planted)
    assert "sandbox.library_dirs" in found and "autograder.engine.sandbox.common" in found
    assert "bubblewrap" in found and "launch" in found


def test_every_name_read_from_the_facade_is_there():
    """Does any module read ``sandbox.NAME`` (or import NAME from the package) that the
    facade no longer has (a name moved to a module and not re-exported)?"""
    missing = []
    for name, text in _sources().items():
        tree = ast.parse(text)
        names = set()
        if FACADE_IMPORT in text:
            names |= {
                n.attr
                for n in ast.walk(tree)
                if isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id == "sandbox"
            }
        names |= {
            a.name
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module == "autograder.engine.sandbox"
            for a in n.names
        }
        missing += [f"{name}: sandbox.{a}" for a in sorted(names) if not hasattr(sandbox, a)]
    assert missing == [], "read from the facade but not there:\n" + "\n".join(missing)


def test_the_facade_lists_each_module_of_the_package():
    """Does the package's docstring name every module (a module added without a line saying
    what it holds)?"""
    listed = set(re.findall(r"^    (\w+) {2,}", sandbox.__doc__, re.M))
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert listed == modules, f"listed {sorted(listed)}, modules {sorted(modules)}"


def test_paths_found_from_the_package_still_name_the_grader_and_the_harness():
    """The modules sit one folder deeper than sandbox.py did: does ``grader_dir`` (the
    package the sandbox keeps out of a child's view) still name ``autograder/``, not a folder
    inside it, and does the harness written into every sandbox exist?"""
    import autograder

    assert sandbox.grader_dir() == Path(autograder.__file__).resolve().parent
    assert sandbox.HARNESS.name == "child_harness.py" and sandbox.HARNESS.is_file()
