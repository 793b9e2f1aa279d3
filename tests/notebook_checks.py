"""The checks on an executed notebook, shared by tests/test_notebooks.py (nbclient runs it)
and tests/test_browser.py (JupyterLab runs it and saves it), so the two cannot drift.

Each returns the list of problems found, one sentence each; an empty list means it passes.
"""

from __future__ import annotations

import json
import re


def error_outputs(nb) -> list[tuple[int, str, str]]:
    """(cell index, ename, evalue) of every error output of the notebook's code cells."""
    return [
        (i, o.get("ename"), o.get("evalue"))
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]


def solution_problems(nb) -> list[str]:
    """A solved notebook after a run: no error output anywhere; every hidden-test cell returned
    its full points as its execute_result and wrote nothing to stderr."""
    from autograder.notebooks import notebook

    problems = [f"cell {i} raised {name}: {value}" for i, name, value in error_outputs(nb)]
    tests = [c for c in nb.cells if notebook.cell_role(c) == "test"]
    if not tests:
        problems.append("the solved notebook has no hidden-test cell")
    for cell in tests:
        meta = notebook.nbgrader_meta(cell)
        gid, points = meta.get("grade_id"), float(meta.get("points", 0))
        outputs = cell.get("outputs", [])
        results = [o for o in outputs if o.get("output_type") == "execute_result"]
        if not results:
            problems.append(f"{gid} returned nothing (no execute_result)")
        else:
            text = results[0].get("data", {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            try:
                got = float(text)
            except ValueError:
                problems.append(f"{gid} returned {text!r}, not a number of points")
            else:
                if got != points:
                    problems.append(f"{gid} returned {got:g} of its {points:g} points")
        stderr = [
            o for o in outputs if o.get("output_type") == "stream" and o.get("name") == "stderr"
        ]
        if stderr:
            text = "".join(
                "".join(o["text"]) if isinstance(o.get("text"), list) else str(o.get("text", ""))
                for o in stderr
            )
            problems.append(f"{gid} wrote to stderr: {text[:200]!r}")
    return problems


def exercise_problems(nb) -> list[str]:
    """An unsolved notebook after every cell was run: at least one error, and every error is the
    NotImplementedError of an unsolved function."""
    errors = error_outputs(nb)
    problems = [] if errors else ["the exercise has no unsolved function (no error at all)"]
    bad = [e for e in errors if e[1] != "NotImplementedError"]
    if bad:
        problems.append(f"errors other than NotImplementedError: {bad}")
    return problems


def is_plot_cell(src: str) -> bool:
    """Does the cell's code draw a matplotlib figure?"""
    return bool(re.search(r"\bplt\.(show|subplots|figure|plot)\(", src))


def is_widget_cell(src: str) -> bool:
    """Does the cell's code make a widget (an exploration, or the "Check my work" button)?"""
    return bool(re.search(r"\b(widgets\.\w+\(|interact\(|interactive\(|check_my_work\()", src))


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def display_problems(nb) -> list[str]:
    """A solved notebook run by a kernel (nbclient, no browser): every plotting cell displayed
    an image, or a widget whose output holds it, and every widget cell a widget view (what
    tests/test_browser.py sees rendered); at least one of each in the notebook, the figures
    drawn inside widgets counted from the widget state nbclient stores in the notebook. Needs
    the kernel's own inline matplotlib backend (no MPLBACKEND in its environment)."""
    state = json.dumps(nb.metadata.get("widgets", {}))
    problems, images, widgets = [], state.count('"image/png"'), 0
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        data = [o.get("data", {}) for o in c.get("outputs", [])]
        shown_images = sum(1 for d in data if "image/png" in d)
        shown_widgets = sum(1 for d in data if WIDGET_VIEW in d)
        images, widgets = images + shown_images, widgets + shown_widgets
        first = c.source.strip().splitlines()[0][:70] if c.source.strip() else ""
        if is_plot_cell(c.source) and not shown_images and not shown_widgets:
            problems.append(f"cell {i} ({first}) plots but displayed no image")
        if is_widget_cell(c.source) and not shown_widgets:
            problems.append(f"cell {i} ({first}) makes a widget but displayed none")
    if not images:
        problems.append("the solved notebook displays no figure")
    if not widgets:
        problems.append("the solved notebook displays no widget")
    return problems
