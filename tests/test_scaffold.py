"""`drills new-function` (autograder/scaffold.py): a new graded function in every place it lives.

The scaffold is run on a throw-away function in a temporary copy of the repository (never in
solutions/ here); its placeholders are filled as an instructor would fill them, and the sync
tests are run in the copy: the scaffold's output must pass them once no placeholder is left.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from autograder import assignments
from autograder.cases.spec import TODO, grading_line
from autograder.notebooks import notebook
from autograder.scaffold import (
    PLACES,
    ScaffoldError,
    _add_to_spec_tuple,
    _import_spec_names,
    case_module_entry,
    check_mistake_ids,
    common_mistakes_cell,
    format_python,
    insertion_index,
    notebook_cells,
    parse_params,
    scaffold,
    spec_constant,
    sync_grading_lines,
)

COPIED = ("autograder", "solutions", "tests", "benchmarks", "CHANGELOG.md", "pyproject.toml")
MISTAKES = ["off-by-one", "abs", "squared", "negated", "mean"]


def placeholders(root: Path) -> list[str]:
    """Every `TODO(scaffold)` left in the places the scaffold writes to, as file:line."""
    found = []
    for place in PLACES:
        path = root / place
        files = (
            [path]
            if path.is_file()
            else sorted(p for p in path.rglob("*") if p.suffix in (".py", ".ipynb") and p.is_file())
        )
        for f in files:
            for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                if TODO in line:
                    found.append(f"{f.relative_to(root)}:{n}")
    return found


def test_no_scaffold_placeholder_is_left():
    """Is every TODO(scaffold) that `drills new-function` wrote filled in?"""
    left = placeholders(ROOT)
    assert not left, (
        "placeholders of `drills new-function` still to fill (docs/authoring.md):\n  "
        + "\n  ".join(left)
    )


def _copy(tmp: Path) -> Path:
    repo = tmp / "repo"
    repo.mkdir()
    skip = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "*.pyc")
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, repo / name, ignore=skip)
        else:
            shutil.copy2(src, repo / name)
    return repo


def _env(repo: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(repo))
    env.pop("DRILLS_COURSE_ROOT", None)
    return env


def _replace(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == count, (path.name, old, text.count(old))
    path.write_text(text.replace(old, new), encoding="utf-8")


def _set_cell(nb_path: Path, cell_id: str, source: str) -> None:
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["id"] == cell_id)
    cell["source"] = source.splitlines(keepends=True)
    nb_path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _fill(repo: Path) -> None:
    """What the instructor writes where the scaffold left TODO(scaffold), for `probe_sum`."""
    nb = repo / "solutions/03_sum_vs_mean/03_sum_vs_mean.ipynb"
    _set_cell(
        nb,
        "md-probe-sum",
        "## 5. A sum\n\nWrite `probe_sum(values)`: the sum of a list of floats.\n\n"
        "- A single value is its own sum.\n"
        "- Raise `ValueError` with a message that says what is wrong when values is empty.\n\n"
        "For `[1.0, 2.0, 3.5]` the answer is 6.5.",
    )
    _set_cell(
        nb,
        "code-probe-sum",
        'def probe_sum(values):\n    """The sum of values, a non-empty list of floats.\n\n'
        "    Raises:\n        ValueError: when values is empty.\n"
        '    """\n    ### BEGIN SOLUTION\n    if len(values) == 0:\n'
        '        raise ValueError("values is empty")\n    return float(sum(values))\n'
        "    ### END SOLUTION\n",
    )
    _set_cell(
        nb,
        "check-probe-sum",
        'assert probe_sum([1.0, 2.0, 3.5]) == 6.5\nprint("probe_sum: self-check passed")\n',
    )
    for m in MISTAKES:
        _replace(nb, f"{TODO}: the mistake | {TODO}: what you get | `{m}`", f"{m} | a slip | `{m}`")

    module = repo / "autograder/assignments/a03_sum_vs_mean.py"
    fills = {
        '"""TODO(scaffold): a tuple of probe_sum\'s positional arguments drawn from ``rng`` '
        '(numpy Generator)."""\n    return ("TODO(scaffold)",)': '"""Five standard normal values."""\n'
        "    return (rng.standard_normal(5).tolist(),)",
        'Case("example", ("TODO(scaffold)",), note="TODO(scaffold): the worked example")': (
            'Case("example", ([1.0, 2.0, 3.5],), note="the worked example: 6.5")'
        ),
        'note="TODO(scaffold): what the generated inputs are"': 'note="five random values"',
        '("TODO(scaffold)",),\n            kind="edge",\n            note="TODO(scaffold): what the edge case '
        'checks",\n            rule="TODO(scaffold): the edge rule, in words the edge case\'s '
        'rule repeats",': '([-2.25],),\n            kind="edge",\n            note="one value",'
        '\n            rule="a single value is its own sum",',
        '("TODO(scaffold)",),\n            raises=ValueError,\n            note="TODO(scaffold): which invalid '
        'input raises ValueError",\n            rule="values is invalid",': "([],),\n"
        '            raises=ValueError,\n            note="an empty list",\n'
        '            rule="values is empty",',
        '"example": ("TODO(scaffold)", "TODO(scaffold): where the value comes from")': (
            '"example": (6.5, "by hand: 1 + 2 + 3.5")'
        ),
        '"edge": ("TODO(scaffold)", "TODO(scaffold): where the value comes from")': (
            '"edge": (-2.25, "by hand: the one value")'
        ),
    }
    for old, new in fills.items():
        _replace(module, old, new)
    formulas = {
        "off-by-one": "sum(values) + 1",
        "abs": "sum(abs(v) for v in values)",
        "squared": "sum(v * v for v in values)",
        "negated": "-sum(values)",
        "mean": "sum(values) / len(values)",
    }
    text = module.read_text(encoding="utf-8")
    for m, formula in formulas.items():
        block = re.compile(
            rf'Mistake\(\n\s+"{re.escape(m)}",\n\s+"TODO\(scaffold\)[^\n]*\n\s+formula=lambda '
            r'values: "TODO\(scaffold\)",[^\n]*\n\s+source=NO_SOURCE,[^\n]*\n'
        )
        text, n = block.subn(
            f'Mistake(\n            "{m}",\n            "you computed {m}; return the sum",\n'
            f"            formula=lambda values: {formula},\n            source=NO_SOURCE,\n",
            text,
        )
        assert n == 1, m
    text = text.replace(
        "fill every TODO, docs/authoring.md", "a throw-away function of tests/test_scaffold.py"
    )
    module.write_text(text, encoding="utf-8")

    changelog = repo / "CHANGELOG.md"
    _replace(changelog, f"`probe_sum` ({TODO}: why)", "`probe_sum` (a test of the scaffold)")
    _replace(changelog, f"- {TODO}: what it grades", "- What it grades")


@pytest.mark.slow
def test_scaffold_output_passes_the_sync_tests_once_filled(tmp_path):
    """`drills new-function 03_sum_vs_mean probe_sum --points 2` in a copy: the five cells with
    their nbgrader metadata and ids, the case module entry, the table and CHANGELOG rows; then,
    placeholders filled, the sync tests (cells, grading line, table, CHANGELOG, rules, anchors,
    the grading contract and the mutation score of the new function) pass in the copy."""
    repo = _copy(tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "new-function", "03_sum_vs_mean", "probe_sum"]
        + ["--points", "2", "--params", "values", "--mistakes", ",".join(MISTAKES)],
        capture_output=True,
        text=True,
        cwd=repo,
        env=_env(repo),
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert (
        "What is left" in run.stdout and "mutation_score.py 03_sum_vs_mean probe_sum" in run.stdout
    )

    nb = json.loads((repo / "solutions/03_sum_vs_mean/03_sum_vs_mean.ipynb").read_text())
    by_id = {c["id"]: c for c in nb["cells"]}
    sol = by_id["code-probe-sum"]["metadata"]["nbgrader"]
    assert sol["solution"] is True and sol["grade_id"] == "probe_sum" and not sol["grade"]
    test = by_id["test-probe-sum"]["metadata"]["nbgrader"]
    assert test["grade"] is True and test["locked"] and test["points"] == 2
    assert test["grade_id"] == "test_probe_sum"
    ids = [c["id"] for c in nb["cells"]]
    i = ids.index("md-probe-sum")
    assert ids[i : i + 5] == [
        "md-probe-sum",
        "code-probe-sum",
        "grading-probe-sum",
        "check-probe-sum",
        "test-probe-sum",
    ]
    assert len(placeholders(repo)) > 10
    assert not placeholders(ROOT), "the scaffold wrote into the repository, not the copy"

    # the same name twice is refused
    again = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "new-function", "03_sum_vs_mean", "probe_sum"]
        + ["--points", "2"],
        capture_output=True,
        text=True,
        cwd=repo,
        env=_env(repo),
        timeout=300,
    )
    assert again.returncode == 2 and "already has a function 'probe_sum'" in again.stderr

    _fill(repo)
    assert placeholders(repo) == []
    checks = [
        "tests/test_cases.py",
        "tests/test_rules.py",
        "tests/test_anchors.py",
        "tests/test_mutation.py",
        "tests/test_changelog.py",
        "tests/test_scaffold.py",
        "-k",
        "probe_sum or cells_match or graded or table_lists or five_mistakes "
        "or grading_table or known_mistakes or no_scaffold_placeholder",
    ]
    sync = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *checks],
        capture_output=True,
        text=True,
        cwd=repo,
        env=_env(repo),
        timeout=900,
    )
    assert sync.returncode == 0, sync.stdout[-6000:] + sync.stderr[-2000:]
    for test in (
        "test_cases.py::test_reference_scores_full_marks[03_sum_vs_mean-probe_sum]",
        "test_cases.py::test_known_mistake_loses_points_and_is_diagnosed[03_sum_vs_mean-probe_sum-abs]",
        "test_cases.py::test_common_mistakes_table_lists_the_catalogue[03_sum_vs_mean]",
        "test_rules.py::test_every_edge_and_invalid_case_checks_a_rule_the_notebook_states[03_sum_vs_mean-probe_sum]",
        "test_anchors.py::test_reference_reproduces_its_anchors[03_sum_vs_mean-probe_sum]",
        "test_mutation.py::test_every_non_equivalent_mutant_is_killed[03_sum_vs_mean-probe_sum]",
        "test_changelog.py::test_changelog_grading_table_matches_cases_points_splits_and_tolerances",
    ):
        assert f"PASSED tests/{test}" in sync.stdout, test


def test_params_take_defaults_as_in_a_def():
    """`--params "values, mask, eps=1e-8"` (refused before: "each must be a Python name"): the
    def, the mistakes' formulas and the description carry the default; the cases pass only the
    parameters without one."""
    params = parse_params("values, mask, eps=1e-8")
    assert params == ["values", "mask", "eps=1e-8"]
    cells = notebook_cells("03_sum_vs_mean", "masked_whiten", 2, params)
    assert "".join(cells[1]["source"]).startswith("def masked_whiten(values, mask, eps=1e-8):\n")
    entry = case_module_entry("masked_whiten", params, ["m"], "MASKED_WHITEN")
    assert 'formula=lambda values, mask, eps=1e-8: "TODO(scaffold)"' in entry
    assert 'Case("example", ("TODO(scaffold)", "TODO(scaffold)"), note=' in entry
    assert 'return ("TODO(scaffold)", "TODO(scaffold)")' in entry
    compile(entry, "<scaffold>", "exec")


@pytest.mark.parametrize(
    "bad, says",
    [
        ("x, *rest", "plain parameters only"),
        ("x, /, y", "plain parameters only"),
        ("x, **kw", "plain parameters only"),
        ("x=1, y", "not a Python parameter list"),
        ("class", "not a Python parameter list"),
        ("", "at least one parameter"),
    ],
)
def test_params_that_a_case_cannot_pass_are_refused(bad, says):
    with pytest.raises(ScaffoldError, match=says):
        parse_params(bad)


def test_every_catalogued_mistake_id_is_accepted_by_new_function():
    """`--mistakes divide-by-T` was refused ("lower-case words"), an id notebook 03's own
    catalogue uses: is every mistake id of every catalogue accepted, so that an author can
    scaffold a function with the ids the course already has?"""
    ids = {
        m.id for a in assignments.MODULES for f in assignments.get(a).functions for m in f.mistakes
    }
    assert "divide-by-T" in ids and len(ids) > 100, sorted(ids)
    refused = []
    for mistake in sorted(ids):
        try:
            check_mistake_ids([mistake])
        except ScaffoldError as e:
            refused.append(f"{mistake}: {e}")
    assert not refused, refused
    for a in assignments.MODULES:
        for f in assignments.get(a).functions:
            check_mistake_ids([m.id for m in f.mistakes])  # one function's ids, all at once


@pytest.mark.parametrize(
    "bad", ["", "two words", "a/b", "a\\b", "col|umn", 'say"hi"', "-leading", "shape:x", "a,b"]
)
def test_a_mistake_id_the_catalogue_cannot_use_is_refused_saying_why(bad):
    """An id with a space, a quote, a path separator or a table's `|` breaks the case module,
    the Markdown tables or the test ids: is it refused with what an id may hold?"""
    with pytest.raises(ScaffoldError, match=r"not usable: an id starts with a letter or a digit"):
        check_mistake_ids(["ok-id", bad])


def test_a_mistake_id_given_twice_is_refused_naming_it():
    """Two mistakes with one id would collide in the FunctionSpec: is the repeated id named?"""
    with pytest.raises(ScaffoldError, match=r"distinct: \['divide-by-T'\]"):
        check_mistake_ids(["divide-by-T", "abs", "divide-by-T"])


def test_scaffolded_case_module_passes_make_lint_without_ruff_on_path(tmp_path):
    """The case module `drills new-function` wrote failed `ruff format --check` (`make lint`)
    until reformatted by hand, when `drills` ran from the virtualenv without ruff on PATH:
    scaffolded so, with long parameters and mixed-case mistake ids, does the module pass
    `ruff check` and `ruff format --check` as written?"""
    repo = _new_notebook_copy(tmp_path)
    env = dict(_env(repo), PATH=os.pathsep.join(["/usr/bin", "/bin"]))
    for name, params, mistakes in (
        ("first_fn", "values", "divide-by-T,no-validation"),
        (
            "second_function_with_a_long_name",
            "logprobs, ref_logprobs, mask, eps=1e-8, max_len=None",
            "sum-norm-without-B,mean-over-T,final-minus-0.2,no_checks,abs",
        ),
    ):
        run = subprocess.run(
            [sys.executable, "-m", "autograder.cli", "new-function", "08_probe", name]
            + ["--points", "1", "--params", params, "--mistakes", mistakes],
            capture_output=True,
            text=True,
            cwd=repo,
            env=env,
            timeout=300,
        )
        assert run.returncode == 0, run.stderr
        assert "not formatted yet" not in run.stdout, run.stdout
    module = "autograder/assignments/a08_probe.py"
    for check in (["check"], ["format", "--check", "--diff"]):
        lint = subprocess.run(
            [sys.executable, "-m", "ruff", *check, module],
            capture_output=True,
            text=True,
            cwd=repo,
            timeout=120,
        )
        assert lint.returncode == 0, lint.stdout + lint.stderr


def test_without_ruff_the_checklist_says_which_command_formats_the_module(tmp_path, monkeypatch):
    """With no ruff to run, the scaffold left the module unformatted and said nothing: does the
    checklist give the exact command that makes it pass `make lint`?"""
    from autograder import scaffold as scaffold_module

    path = tmp_path / "autograder" / "assignments" / "a08_probe.py"
    path.parent.mkdir(parents=True)
    path.write_text(NEW_MODULE, encoding="utf-8")
    monkeypatch.setattr(scaffold_module, "_ruff", lambda: None)
    lines = format_python(path, tmp_path)
    rel = "autograder/assignments/a08_probe.py"
    assert f"ruff check --fix --select I {rel} && ruff format {rel}" in "\n".join(lines), lines


def test_spec_constant_is_named_as_the_others_unless_taken():
    """The module's specs are named MASKED_MEAN, LOG_RATIOS: the new one too (it was
    MASKED_WHITEN_SPEC), unless the module already binds the name."""
    assert spec_constant("masked_whiten", "MASKED_MEAN = FunctionSpec(\n") == "MASKED_WHITEN"
    assert spec_constant("mask", "HAND_MASK = 1\nMASK_ROWS = 2\n") == "MASK"
    assert spec_constant("mask", "MASK = np.array([1, 0])\n") == "MASK_SPEC"


# -- a new notebook's first function; imports; the grading line (as notebook 07 needed) --


SKELETON = [  # a new notebook before its first graded function: title, setup, closing section
    {"cell_type": "markdown", "id": "md-01", "metadata": {}, "source": ["# 08 · A probe"]},
    {
        "cell_type": "code",
        "execution_count": None,
        "id": "code-02",
        "metadata": {
            "deletable": False,
            "editable": False,
            "nbgrader": {
                "grade": False,
                "grade_id": "setup_imports",
                "locked": True,
                "schema_version": 3,
                "solution": False,
            },
        },
        "outputs": [],
        "source": ["import math"],
    },
    {"cell_type": "markdown", "id": "md-03", "metadata": {}, "source": ["## Check my work"]},
    {
        "cell_type": "code",
        "execution_count": None,
        "id": "code-04",
        "metadata": {},
        "outputs": [],
        "source": [
            "from autograder.widgets import check_my_work\n",
            "\n",
            'check_my_work("08_probe")',
        ],
    },
]
NEW_MODULE = '''"""08_probe: a throw-away notebook of tests/test_scaffold.py."""

from __future__ import annotations

from autograder.cases.spec import AssignmentSpec

SPEC = AssignmentSpec("08_probe", ())
'''


def _new_notebook_copy(tmp: Path) -> Path:
    """A copy with notebook 08_probe registered (MODULES, ASSIGNMENTS), its skeleton and its
    case module with no function: what docs/authoring.md's "A new notebook" says to create."""
    repo = tmp / "repo"
    repo.mkdir()
    shutil.copytree(
        ROOT / "autograder", repo / "autograder", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("CHANGELOG.md", "pyproject.toml"):
        shutil.copy2(ROOT / name, repo / name)
    _replace(
        repo / "autograder/assignments/__init__.py",
        '    "06_nthr": "a06_nthr",\n',
        '    "06_nthr": "a06_nthr",\n    "08_probe": "a08_probe",\n',
    )
    _replace(
        repo / "autograder/notebooks/notebook.py",
        '    "06_nthr",\n',
        '    "06_nthr",\n    "08_probe",\n',
    )
    (repo / "autograder/assignments/a08_probe.py").write_text(NEW_MODULE, encoding="utf-8")
    nb = {"cells": SKELETON, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (repo / "solutions/08_probe").mkdir(parents=True)
    (repo / "solutions/08_probe/08_probe.ipynb").write_text(json.dumps(nb, indent=1) + "\n")
    return repo


def _new_function(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograder.cli", "new-function", *args],
        capture_output=True,
        text=True,
        cwd=repo,
        env=_env(repo),
        timeout=300,
    )


def test_first_function_of_a_new_notebook(tmp_path):
    """The first function of a notebook with no graded function yet (it failed: `max()` over no
    test cell, and `AssignmentSpec(id, ())` became `(, CONST)`): its cells go before the
    closing sections, the common-mistakes table is written, SPEC becomes `(FIRST,)` then
    `(FIRST, SECOND)`, the spec classes are imported once, and the module imports."""
    repo = _new_notebook_copy(tmp_path)
    for name, params in (("first_fn", "values"), ("second_fn", "x, y")):
        run = _new_function(repo, "08_probe", name, "--points", "1", "--params", params)
        assert run.returncode == 0, run.stderr
        assert "drills cases 08_probe --grading-lines" in run.stdout  # the stale-line fix
        assert "A new notebook's functions share one entry" in run.stdout
    nb = json.loads((repo / "solutions/08_probe/08_probe.ipynb").read_text())
    ids = [c["id"] for c in nb["cells"]]
    slugs = [
        f"{k}-{n}"
        for n in ("first-fn", "second-fn")
        for k in ("md", "code", "grading", "check", "test")
    ]
    assert ids == ["md-01", "code-02", *slugs, "md-common-mistakes", "md-03", "code-04"], ids
    table = "".join(nb["cells"][-3]["source"])
    assert "| `first_fn` |" in table and "| `second_fn` |" in table

    text = (repo / "autograder/assignments/a08_probe.py").read_text()
    assert re.search(r'SPEC = AssignmentSpec\("08_probe", \(FIRST_FN, SECOND_FN\)\)', text), text
    imports = re.findall(r"^from autograder\.cases\.spec import (.*)$", text, re.M)
    assert len(imports) == 1, imports
    assert set(imports[0].split(", ")) == {
        "NO_SOURCE",
        "AssignmentSpec",
        "Case",
        "FunctionSpec",
        "Mistake",
    }
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "from autograder import assignments; print(assignments.get('08_probe').names)",
        ],
        capture_output=True,
        text=True,
        cwd=repo,
        env=_env(repo),
        timeout=300,
    )
    assert loaded.stdout.strip() == "['first_fn', 'second_fn']", loaded.stderr
    changelog = (repo / "CHANGELOG.md").read_text()
    assert "| 08_probe | `first_fn` |" in changelog and "| 08_probe | `second_fn` |" in changelog


def test_a_new_notebook_not_yet_registered_or_created_is_refused_with_what_to_create(tmp_path):
    """Before its registration, skeleton and case module exist, the scaffold says which to
    create (it raised StopIteration, KeyError or ModuleNotFoundError)."""
    with pytest.raises(ScaffoldError, match=r"MODULES .*ASSIGNMENTS .*A new notebook"):
        scaffold("09_unknown", "f", 1, root=ROOT)
    repo = tmp_path / "repo"
    (repo / "solutions").mkdir(parents=True)
    (repo / "autograder/assignments").mkdir(parents=True)
    with pytest.raises(
        ScaffoldError, match=r"solutions/03_sum_vs_mean/03_sum_vs_mean.ipynb does not"
    ):
        scaffold("03_sum_vs_mean", "f", 1, root=repo)
    (repo / "solutions/03_sum_vs_mean").mkdir()
    shutil.copy2(notebook.source_path("03_sum_vs_mean", ROOT), repo / "solutions/03_sum_vs_mean")
    with pytest.raises(
        ScaffoldError,
        match=r'a03_sum_vs_mean.py does not exist: .*AssignmentSpec\("03_sum_vs_mean", \(\)\)',
    ):
        scaffold("03_sum_vs_mean", "f", 1, root=repo)


def test_spec_tuple_takes_the_first_function_and_the_next():
    """`AssignmentSpec(id, ())` became `(, CONST)`, a syntax error: the first function makes
    a one-tuple, the next ones are added after it."""
    empty = 'SPEC = AssignmentSpec("08_probe", ())\n'
    assert _add_to_spec_tuple(empty, "FIRST") == 'SPEC = AssignmentSpec("08_probe", (FIRST,))\n'
    one = _add_to_spec_tuple(empty, "FIRST")
    assert (
        _add_to_spec_tuple(one, "SECOND") == 'SPEC = AssignmentSpec("08_probe", (FIRST, SECOND))\n'
    )
    wrapped = 'SPEC = AssignmentSpec(\n    "08_probe",\n    (\n        A,\n        B,\n    ),\n)\n'
    tup = ast.parse(_add_to_spec_tuple(wrapped, "C")).body[0].value.args[1]
    assert [e.id for e in tup.elts] == ["A", "B", "C"]


def test_spec_names_are_imported_once_and_no_todo_import():
    """Each run re-added `from autograder.cases.spec import TODO`, left unused (ruff F401) once
    the placeholders were filled: the scaffold's placeholders are quoted strings now, and the
    spec classes it uses are merged into the module's one import line, each once."""
    base = "from __future__ import annotations\n\nimport math\n\nfrom autograder.cases.spec import AssignmentSpec\n\nX = 1\n"
    once = _import_spec_names(base)
    assert once.count("from autograder.cases.spec import") == 1
    assert (
        "from autograder.cases.spec import NO_SOURCE, AssignmentSpec, Case, FunctionSpec, Mistake\n"
        in once
    )
    assert _import_spec_names(once) == once
    bare = "from __future__ import annotations\n\nimport math\n\nX = 1\n"
    added = _import_spec_names(bare)
    assert (
        "import math\n\nfrom autograder.cases.spec import NO_SOURCE, Case, FunctionSpec, Mistake\n"
        in added
    )
    entry = case_module_entry("probe", ["values"], ["m"], "PROBE")
    names = {n.id for n in ast.walk(ast.parse(entry)) if isinstance(n, ast.Name)}
    assert "TODO" not in names, "a scaffolded placeholder needs an import that outlives it"


def test_insertion_index_after_the_last_test_or_before_the_closing_sections():
    cells = [dict(c) for c in SKELETON]
    assert insertion_index(cells) == 2  # before "## Check my work"
    cells.insert(
        2, {"cell_type": "markdown", "id": "x", "metadata": {}, "source": ["## Explore: a plot"]}
    )
    assert insertion_index(cells) == 2
    assert insertion_index(cells[:2]) == 2  # no closing section: at the end
    nb = json.loads(notebook.source_path("03_sum_vs_mean", ROOT).read_text())
    ids = [c["id"] for c in nb["cells"]]
    assert ids[insertion_index(nb["cells"]) - 1] == "test-20"  # after the last hidden test


def test_grading_lines_are_rewritten_after_a_change_of_points_or_tolerance(tmp_path):
    """The scaffolded grading line states the default split and tolerance and went stale when
    the author changed them (tests/test_cases.py caught it later): `drills cases A
    --grading-lines` rewrites every stale line, and leaves the others."""
    a = "03_sum_vs_mean"
    (tmp_path / "solutions" / a).mkdir(parents=True)
    nb_path = tmp_path / "solutions" / a / f"{a}.ipynb"
    shutil.copy2(notebook.source_path(a, ROOT), nb_path)
    assert sync_grading_lines(a, tmp_path) == []
    nb = json.loads(nb_path.read_text())
    by_id = {c["id"]: c for c in nb["cells"]}
    by_id["test-16"]["metadata"]["nbgrader"]["points"] = 5  # masked_mean: 2 -> 5 points
    line = by_id["grading-aggregate-loss"]
    line["source"] = ["".join(line["source"]).replace("≤ 1e-06 + 1e-05", "≤ 1e-08 + 1e-07")]
    nb_path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    assert sorted(sync_grading_lines(a, tmp_path, write=False)) == ["aggregate_loss", "masked_mean"]
    assert sorted(sync_grading_lines(a, tmp_path)) == ["aggregate_loss", "masked_mean"]
    by_id = {c["id"]: c for c in json.loads(nb_path.read_text())["cells"]}
    f = assignments.get(a).function("masked_mean")
    assert grading_line("masked_mean", 5, f.split, (f.rtol, f.atol)) in "".join(
        by_id["grading-masked-mean"]["source"]
    )
    assert "≤ 1e-06 + 1e-05" in "".join(by_id["grading-aggregate-loss"]["source"])
    assert sync_grading_lines(a, tmp_path) == []


def test_a_common_mistakes_section_without_a_table_gets_its_header():
    """A skeleton's `## Common mistakes` with prose and no table ("no table found where the
    rows go" before): the table's header is added under the prose, and the rows go under it."""
    cells = [
        {
            "cell_type": "markdown",
            "id": "a",
            "metadata": {},
            "source": ["## Common mistakes\n", "\n", "Soon."],
        },
        {"cell_type": "markdown", "id": "b", "metadata": {}, "source": ["## Check my work"]},
    ]
    cell = common_mistakes_cell(cells)
    assert cell is cells[0] and len(cells) == 2
    text = "".join(cell["source"])
    assert text.startswith("## Common mistakes\n\nSoon.\n\n| function | mistake |"), text
    assert common_mistakes_cell(cells)["source"] == cell["source"]  # once
    fresh = [cells[1]]
    made = common_mistakes_cell(fresh)
    assert [c["id"] for c in fresh] == ["md-common-mistakes", "b"] and made is fresh[0]


def test_the_first_row_of_a_new_table_is_not_glued_to_its_separator():
    """A Common-mistakes cell ending with the table's separator line and no newline (as the
    scaffold writes a new one): does each new row start a line of its own, so that the table
    is read with its rows?"""
    from autograder.scaffold import _insert_after_last

    md = ["## Common mistakes\n", "\n", "| function | mistake | what happens | feedback id |\n"]
    md.append("|---|---|---|---|")
    rows = ["| `f` | a | b | `m1` |\n", "| | c | d | `m2` |\n"]
    _insert_after_last(md, 0, len(md), "|", rows)
    lines = "".join(md).splitlines()
    assert lines[-3:] == ["|---|---|---|---|", "| `f` | a | b | `m1` |", "| | c | d | `m2` |"]


def test_a_validation_mistake_is_scaffolded_as_unchecked_not_as_a_formula():
    """`--mistakes no-validation`: is it written `unchecked=True` (the reference without its
    input checks, as docs/authoring.md says), and the others as formula= placeholders?"""
    text = case_module_entry("f", ["x", "eps=1e-8"], ["negated", "no-validation"], "F")
    negated = text[text.index('"negated"') : text.index('"no-validation"')]
    unchecked = text[text.index('"no-validation"') :]
    assert "formula=lambda x, eps=1e-8:" in negated
    assert (
        "unchecked=True" in unchecked.split("),")[0] and "formula=" not in unchecked.split("),")[0]
    )


def test_new_notebook_needs_no_hand_made_skeleton_module_or_registration(tmp_path):
    """`drills new-notebook 08_probe`: is it registered (ASSIGNMENTS, MODULES), with a skeleton
    that follows every rule of a notebook, a case module that imports, a README row and a
    CHANGELOG entry, so that `drills new-function` works on it at once? A taken number is
    refused and nothing is written."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copytree(
        ROOT / "autograder", repo / "autograder", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(ROOT / "solutions", repo / "solutions")
    for name in ("CHANGELOG.md", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, repo / name)

    def drills(*args):
        return subprocess.run(
            [sys.executable, "-m", "autograder.cli", *args],
            capture_output=True,
            text=True,
            cwd=repo,
            env=_env(repo),
            timeout=300,
        )

    made = drills("new-notebook", "08_probe", "--title", "A probe")
    assert made.returncode == 0, made.stderr
    assert "drills new-function 08_probe" in made.stdout
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    taken = drills("new-notebook", "08_other", "--title", "Another")
    assert taken.returncode == 2 and "number 08 is taken" in taken.stderr
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before

    run = _new_function(repo, "08_probe", "first_fn", "--points", "1", "--params", "values")
    assert run.returncode == 0, run.stderr
    check = subprocess.run(
        [
            sys.executable,
            "-c",
            "from autograder import assignments; from autograder.notebooks import layout, "
            "notebook; print(notebook.ASSIGNMENTS[-1], assignments.get('08_probe').names, "
            "layout.problems('08_probe'))",
        ],
        capture_output=True,
        text=True,
        cwd=repo,
        env=_env(repo),
        timeout=300,
    )
    assert check.stdout.strip() == "08_probe ['first_fn'] []", check.stderr
    readme = (repo / "README.md").read_text()
    assert "[A probe](exercises/08_probe/08_probe.ipynb)" in readme
    assert "08_probe: a new notebook, A probe" in (repo / "CHANGELOG.md").read_text()
    assert placeholders(repo)  # the skeleton's TODO(scaffold)s are there to be filled
