"""The rules every source notebook follows, in one list, and the check of a notebook against them.

docs/authoring.md ("The rules of a notebook") states each rule in these words;
``tests/test_notebook_layout.py`` checks every notebook against them and that the page states
every one; ``drills author-check ID`` runs that test for one notebook, and ``drills
new-notebook`` writes a skeleton that follows them. What only a run can show (the figure and
the widget are *displayed*, the hidden tests return full points) is checked on the executed
notebook by tests/notebook_checks.py.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

from autograder.notebooks import notebook

CLOSING = ("## Explore", "## In the field", "## Common mistakes", "## Check my work")


def _code(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def _title(nb, a):
    first = nb.cells[0] if nb.cells else None
    if first is None or first.cell_type != "markdown":
        return "the first cell is not the title (markdown)"
    number = a.split("_")[0]
    if not re.match(rf"# {number} · \S", first.source):
        return f"the first cell does not start with the title line `# {number} · …`"
    if "Difficulty" not in first.source:
        return "the title cell does not give the difficulty and time (**Difficulty: n/5 · …**)"
    return None


def _story(nb, a):
    return (
        None if any(h.startswith("## The story") for _, h in _headings(nb)) else "no `## The story`"
    )


def _setup(nb, a):
    setup = [c for c in _code(nb) if notebook.cell_role(c) == "setup"]
    if not setup:
        return "no setup cell (code, locked, nbgrader grade_id setup_imports, solution/grade false)"
    return None


# The modules a graded function may use without importing them itself: those the setup cell
# imports. One that only an ungraded cell imports is in the learner's kernel but not in the
# grader's program, so a function using it passes its self-check and fails when graded.
MATHS_MODULES = ("math", "numpy", "torch")


def _maths_imports(source: str) -> set[tuple[str, str]]:
    """(bound name, module) of each maths module ``source`` imports at top level."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in MATHS_MODULES:
                    out.add((a.asname or a.name.split(".")[0], a.name))
    return out


def _setup_has_the_maths(nb, a):
    setup, others = set(), set()
    for c in _code(nb):
        role = notebook.cell_role(c)
        if role == "setup":
            setup |= _maths_imports(c.source)
        elif role == "other":
            others |= _maths_imports(c.source)
    missing = sorted(others - setup)
    if missing:
        said = ", ".join(f"`import {m}{'' if n == m else ' as ' + n}`" for n, m in missing)
        return (
            f"an ungraded cell has {said} and the setup cell does not: a graded function "
            "using it passes in the kernel and fails in the grader"
        )
    return None


def _warm_up_first(nb, a):
    code = _code(nb)
    if not code or f'warm_up("{a}")' not in code[0].source:
        return (
            f'the first code cell does not start Check my work\'s warm-up (warm_up("{a}"), '
            "from autograder.widgets)"
        )
    return None


def _headings(nb) -> list[tuple[int, str]]:
    """(cell index, line) of every `## ` heading, in order (a cell may hold several)."""
    return [
        (i, line)
        for i, c in enumerate(nb.cells)
        if c.cell_type == "markdown"
        for line in c.source.splitlines()
        if line.startswith("## ")
    ]


def _closing(nb, a):
    heads = _headings(nb)
    found = [next((k for k, (_, h) in enumerate(heads) if h.startswith(s)), None) for s in CLOSING]
    missing = [s for s, k in zip(CLOSING, found) if k is None]
    if missing:
        return f"closing sections missing: {', '.join(f'`{s}…`' for s in missing)}"
    if found != sorted(found) or found[-1] != len(heads) - 1:
        return (
            f"the closing sections are not in the order {' / '.join(CLOSING)}, with "
            "`## Check my work` last"
        )
    tests = [i for i, c in enumerate(nb.cells) if notebook.cell_role(c) == "test"]
    explore = heads[found[0]][0]
    if tests and tests[-1] > explore:
        return "a graded function's cells come after `## Explore…`: they go before it"
    return None


def _check_my_work(nb, a):
    if not any(f'check_my_work("{a}")' in c.source for c in _code(nb)):
        return f'no code cell calls check_my_work("{a}") (from autograder.widgets)'
    return None


def _figure(nb, a):
    plots = [c for c in _code(nb) if re.search(r"\bplt\.(show|subplots|figure|plot)\(", c.source)]
    return None if plots else "no cell draws a figure (matplotlib: plt.subplots(…) … plt.show())"


def _widget(nb, a):
    made = [
        c
        for c in _code(nb)
        if re.search(r"\b(widgets\.\w+\(|interact\(|interactive\()", c.source)
        and "check_my_work" not in c.source
    ]
    return None if made else "no exploration widget (ipywidgets: interact(…) or widgets.…(…))"


def _no_outputs(nb, a):
    ran = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.get("outputs")]
    return f"cells {ran} hold outputs: clear them before committing" if ran else None


# (the rule as docs/authoring.md states it, its check: None when it holds, else what is wrong)
RULES: list[tuple[str, Callable]] = [
    ("the first cell is the title `# NN · Title` with the difficulty and time", _title),
    ("a `## The story` section", _story),
    (
        'the first code cell starts Check my work\'s warm-up: `warm_up("ID")` from '
        "autograder.widgets, before the imports (they then run beside the grader's start-up)",
        _warm_up_first,
    ),
    ("a locked setup cell (nbgrader `grade_id` `setup_imports`) with the imports", _setup),
    (
        "the setup cell imports every maths module (`math`, `numpy`, `torch`) that any ungraded "
        "cell imports, so the grader's program has every name the kernel has",
        _setup_has_the_maths,
    ),
    (
        "the closing sections in this order: `## Explore…`, `## In the field`, "
        "`## Common mistakes`, `## Check my work` (the last section); every graded function "
        "before them",
        _closing,
    ),
    ('a code cell `check_my_work("ID")` under `## Check my work`', _check_my_work),
    (
        "at least one cell that draws a matplotlib figure (displayed when the solution runs)",
        _figure,
    ),
    ("at least one exploration widget (ipywidgets; displayed when the solution runs)", _widget),
    ("no outputs: the source notebook is committed cleared", _no_outputs),
]


def problems(assignment: str, root: Path | None = None) -> list[str]:
    """One line per rule the source notebook of ``assignment`` breaks (empty: it follows all)."""
    nb = notebook.read(notebook.source_path(assignment, root))
    out = []
    for rule, check in RULES:
        seen = check(nb, assignment)
        if seen:
            out.append(f"{assignment}: {seen} (rule: {rule})")
    return out
