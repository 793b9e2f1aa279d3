"""`drills new-function` (autograder/scaffold.py): a new graded function in every place it lives.

The scaffold is run on a throw-away function in a temporary copy of the repository (never in
solutions/ here); its placeholders are filled as an instructor would fill them, and the sync
tests are run in the copy: the scaffold's output must pass them once no placeholder is left.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from autograder.cases.spec import TODO
from autograder.scaffold import (
    PLACES,
    ScaffoldError,
    case_module_entry,
    notebook_cells,
    parse_params,
    spec_constant,
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
        '(numpy Generator)."""\n    return (TODO,)': '"""Five standard normal values."""\n'
        "    return (rng.standard_normal(5).tolist(),)",
        'Case("example", (TODO,), note="TODO(scaffold): the worked example")': (
            'Case("example", ([1.0, 2.0, 3.5],), note="the worked example: 6.5")'
        ),
        'note="TODO(scaffold): what the generated inputs are"': 'note="five random values"',
        '(TODO,),\n            kind="edge",\n            note="TODO(scaffold): what the edge case '
        'checks",\n            rule="TODO(scaffold): the edge rule, in words the edge case\'s '
        'rule repeats",': '([-2.25],),\n            kind="edge",\n            note="one value",'
        '\n            rule="a single value is its own sum",',
        '(TODO,),\n            raises=ValueError,\n            note="TODO(scaffold): which invalid '
        'input raises ValueError",\n            rule="values is invalid",': "([],),\n"
        '            raises=ValueError,\n            note="an empty list",\n'
        '            rule="values is empty",',
        '"example": (TODO, "TODO(scaffold): where the value comes from")': (
            '"example": (6.5, "by hand: 1 + 2 + 3.5")'
        ),
        '"edge": (TODO, "TODO(scaffold): where the value comes from")': (
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
            r"values: TODO,[^\n]*\n\s+source=NO_SOURCE,[^\n]*\n"
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
    assert "formula=lambda values, mask, eps=1e-8: TODO" in entry
    assert 'Case("example", (TODO, TODO), note=' in entry
    assert "return (TODO, TODO)" in entry
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


def test_spec_constant_is_named_as_the_others_unless_taken():
    """The module's specs are named MASKED_MEAN, LOG_RATIOS: the new one too (it was
    MASKED_WHITEN_SPEC), unless the module already binds the name."""
    assert spec_constant("masked_whiten", "MASKED_MEAN = FunctionSpec(\n") == "MASKED_WHITEN"
    assert spec_constant("mask", "HAND_MASK = 1\nMASK_ROWS = 2\n") == "MASK"
    assert spec_constant("mask", "MASK = np.array([1, 0])\n") == "MASK_SPEC"
