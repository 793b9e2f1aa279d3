"""Does "Check my work" say so when the saved file is not what the kernel ran, and only then?

The kernel side is a real IPython shell: cells run through it keep their source, as in
JupyterLab, so the button compares what a learner's kernel would really hold.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder import widgets

ROOT = Path(__file__).resolve().parent.parent
A = "01_exact_kl"
# The source notebook: its solution cells carry nbgrader's ### BEGIN/END SOLUTION comments.
SOLVED = ROOT / "solutions" / A / f"{A}.ipynb"


def _cells(path: Path, solution_only: bool = False) -> list[tuple[str, str]]:
    """(grade_id, source) of the code cells a learner runs: setup and solution cells."""
    nb = json.loads(path.read_text())
    out = []
    for c in nb["cells"]:
        meta = c.get("metadata", {}).get("nbgrader", {})
        if c["cell_type"] == "code" and (meta.get("solution") or meta.get("locked")):
            if solution_only and not meta.get("solution"):
                continue
            out.append((meta.get("grade_id", ""), "".join(c["source"])))
    return out


@pytest.fixture
def kernel():
    """Run cells as a learner's kernel would; returns its user namespace."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.reset(new_session=False)

    def run(sources: list[str]) -> dict:
        for src in sources:
            result = shell.run_cell(src, store_history=True)
            assert result.success, result.error_in_exec or result.error_before_exec
        return shell.user_ns

    yield run
    shell.reset(new_session=False)


def _edit(cells, gid, old, new):
    out = []
    for g, src in cells:
        if g == gid:
            assert old in src
            src = src.replace(old, new)
        out.append((g, src))
    return out


def test_no_warning_when_the_kernel_ran_the_saved_cells(kernel):
    """The learner ran every cell and saved: is nothing reported stale, and no warning shown?"""
    ns = kernel([s for _, s in _cells(SOLVED)])
    assert widgets.stale_definitions(SOLVED, ns) == []
    page = widgets.render_report({"score": 7, "max_score": 7, "functions": []}, SOLVED, [])
    assert widgets.STALE not in page


def test_warning_when_the_kernel_ran_a_newer_function_than_the_saved_one(kernel):
    """forward_kl edited and run, not saved: is forward_kl (only) reported, and the warning
    shown next to the score?"""
    cells = _edit(
        _cells(SOLVED), "forward_kl", "return math.fsum(terms)", "return math.fsum(terms) + 0.0"
    )
    ns = kernel([s for _, s in cells])
    stale = widgets.stale_definitions(SOLVED, ns)
    assert stale == ["forward_kl"]
    page = widgets.render_report({"score": 7, "max_score": 7, "functions": []}, SOLVED, stale)
    score_at, warning_at = page.index("Score: 7 / 7"), page.index(widgets.STALE)
    assert score_at < warning_at < page.index("<table>")
    assert "forward_kl" in page[warning_at:]


def test_a_changed_helper_counts_and_comments_or_spacing_do_not(kernel):
    """A helper the graded functions call, changed in the kernel, makes the file stale; trailing
    spaces, an edited comment or extra blank lines do not (they change nothing that runs)."""
    cells = _edit(_cells(SOLVED), "log_ratios", "x > 1", "x > 1.5")
    cells = _edit(cells, "reverse_kl", "return math.fsum(terms)", "return math.fsum(terms)   ")
    cells = _edit(cells, "reverse_kl", "### END SOLUTION", "# my notes\n\n    ### END SOLUTION")
    cells = _edit(cells, "forward_kl", "terms = []", "terms = [ ]")
    ns = kernel([s for _, s in cells])
    assert widgets.stale_definitions(SOLVED, ns) == ["_check_distributions"]


def test_functions_the_kernel_has_not_run_are_not_reported(kernel):
    """Only the setup and log_ratios cells have run: is nothing reported (there is nothing the
    kernel ran that the file lacks)?"""
    cells = [(g, s) for g, s in _cells(SOLVED) if g in ("setup_imports", "log_ratios")]
    ns = kernel([s for _, s in cells])
    assert widgets.stale_definitions(SOLVED, ns) == []


def test_the_button_shows_grading_then_the_warning(kernel, monkeypatch, tmp_path):
    """Clicked with a stale kernel: does the button say "Grading…" while the check runs, then
    show the score with the warning, and go back to "Check my work"?"""
    import IPython.display

    saved = tmp_path / f"{A}.ipynb"
    saved.write_text(SOLVED.read_text())
    monkeypatch.setenv("JPY_SESSION_NAME", str(saved))
    # no check server: the click goes to run_check, replaced below by one that looks
    monkeypatch.setenv("DRILLS_WARM_CACHE", "off")
    monkeypatch.setattr(widgets, "_WARMING", {})
    ns = kernel([s for _, s in _edit(_cells(SOLVED), "reverse_kl", "q * math", "1.0 * q * math")])
    shown: list = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **k: shown.extend(objs))
    seen_during_check = {}

    def fake_check(path, timeout):
        seen_during_check["button"] = button.description
        seen_during_check["shown"] = [getattr(o, "data", "") for o in shown]
        return widgets.CheckOutcome({"score": 7.0, "max_score": 7.0, "functions": []})

    monkeypatch.setattr(widgets, "run_check", fake_check)
    widgets.check_my_work(A, namespace=ns)
    box = shown.pop()
    button = box.children[0].children[0]
    button.click()
    assert seen_during_check["button"] == "Grading…"
    assert any("Grading…" in s for s in seen_during_check["shown"])
    final = shown[-1].data
    assert "Score: 7 / 7" in final and widgets.STALE in final and "reverse_kl" in final
    assert button.description == "Check my work" and not button.disabled
