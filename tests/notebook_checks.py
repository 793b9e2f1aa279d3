"""The checks on an executed notebook, shared by tests/test_notebooks.py (nbclient runs it)
and tests/test_browser.py (JupyterLab runs it and saves it), so the two cannot drift.

Each returns the list of problems found, one sentence each; an empty list means it passes.
"""

from __future__ import annotations


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
