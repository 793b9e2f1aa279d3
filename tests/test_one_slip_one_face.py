"""One slip, one face: a slip that costs points is shown with its cost, in the same words, by
`drills check` (the terminal), Check my work (widgets.render_report on the `--json` report)
and the learner's page of `drills grade` (report.feedback_html).

Four copies of 05's solution, one slip each: a missing colon in the two-line helper
`_require_finite` (it costs group_advantages 1.76 of its 2 points), the helper
`_require_tensor` left raising NotImplementedError (it costs group_advantages 2), a missing
colon in group_advantages' own definition (not graded: 2) and lld_rate left as the stub (not
attempted: 1), graded end to end (slow); and the same two helper slips scored from
made-up outcomes and rendered by the three views' own functions (fast). Before, the stubbed helper was "not graded yet" with no cost in all three views
and the broken one a cost line headed "What your function does", beside a note that called
the helper "defined in no cell of the saved notebook"; the function left as its stub and the
one that was not graded showed no cost; Check my work printed a syntax error's caret in a
list item, where HTML collapses the spaces that put it under its column.
"""

from __future__ import annotations

import html
import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import ROOT, run_drills

from autograder import widgets
from autograder.cases.spec import Case, FunctionSpec, Split
from autograder.course.report import SubmissionResult, feedback_html
from autograder.scoring import evaluate, stubs

A = "05_grpo_lld"


def _stub_body(source: str, name: str) -> str:
    """``source`` with the solution body of the def ``name`` replaced by the exercise's stub."""
    start = source.index(f"def {name}(")
    begin = source.index("    ### BEGIN SOLUTION\n", start)
    end = source.index("    ### END SOLUTION", begin)
    return (
        source[:begin] + "    ### BEGIN SOLUTION\n    raise NotImplementedError()\n" + source[end:]
    )


# slip -> (the solution cell it is made in, the edit, the function it costs, the cost)
SLIPS = {
    "helper-syntax": (
        "group_advantages",
        lambda s: s.replace("def _require_finite(x, name):", "def _require_finite(x, name)"),
        "group_advantages",
        1.76,
    ),
    "helper-stub": (
        "group_advantages",
        lambda s: _stub_body(s, "_require_tensor"),
        "group_advantages",
        2.0,
    ),
    "own-syntax": (
        "group_advantages",
        lambda s: s.replace(
            "def group_advantages(rewards, eps=1e-6):", "def group_advantages(rewards, eps=1e-6)"
        ),
        "group_advantages",
        2.0,
    ),
    "untouched-stub": ("lld_rate", lambda s: _stub_body(s, "lld_rate"), "lld_rate", 1.0),
}
HELPER_SLIPS = ["helper-syntax", "helper-stub"]
VIEWS = ["drills check", "Check my work", "feedback page"]


def _notebook(slip: str) -> dict:
    gid, edit, _, _ = SLIPS[slip]
    nb = json.loads((ROOT / "solutions" / A / f"{A}.ipynb").read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == gid)
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    cell["source"] = edit(source)
    assert cell["source"] != source, slip
    return nb


def _lines_of(page: str) -> list[str]:
    """An HTML view as the lines a reader sees: a line per <br>, paragraph, row and block."""
    text = re.sub(r"<br>|</p>|</td>|</li>|</div>|</pre>|</h2>", "\n", page)
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def views(tmp_path_factory):
    """slip -> {view: the lines it shows}, and slip -> the --json report and the widget's HTML."""
    tmp = tmp_path_factory.mktemp("faces")
    paths = {}
    for slip in SLIPS:
        d = tmp / "class" / "submitted" / slip / A
        d.mkdir(parents=True)
        paths[slip] = d / f"{A}.ipynb"
        paths[slip].write_text(json.dumps(_notebook(slip)), encoding="utf-8")

    def check(slip: str, *flags: str):
        proc = run_drills("check", *flags, str(paths[slip]), timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout

    with ThreadPoolExecutor(2) as pool:
        texts = dict(zip(SLIPS, pool.map(check, SLIPS)))
        reports = dict(zip(SLIPS, pool.map(lambda s: json.loads(check(s, "--json")), SLIPS)))
    out = tmp / "out"
    proc = run_drills("grade", str(tmp / "class"), "--out", str(out), "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    shown, raw = {}, {}
    for slip in SLIPS:
        widget = widgets.render_report(reports[slip])
        page = (out / "feedback" / slip / f"{A}.html").read_text(encoding="utf-8")
        raw[slip] = {"report": reports[slip], "Check my work": widget, "feedback page": page}
        shown[slip] = {
            "drills check": [line.strip() for line in texts[slip].splitlines() if line.strip()],
            "Check my work": _lines_of(widget),
            "feedback page": _lines_of(page),
        }
    return shown, raw


def _cost(points: float) -> str:
    return f"(costs {points:g} point{'' if points == 1 else 's'})"


@pytest.mark.slow
@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("slip", HELPER_SLIPS)
def test_a_slip_in_a_helper_is_one_cost_line_headed_as_a_helper_to_fix(views, slip, view):
    """The helper's slip is a line "A helper to fix: group_advantages calls `_require_…` …
    (costs N points)" with what the grader did, never "not graded yet" without a cost, never
    under "What your function does" / "What your outputs show", and never "defined in no cell"
    for a helper whose definition is in its cell but does not compile."""
    shown, raw = views
    _, _, owner, cost = SLIPS[slip]
    f = next(f for f in raw[slip]["report"]["functions"] if f["function"] == owner)
    assert f["points"] - f["score"] == pytest.approx(cost), f
    lines = shown[slip][view]
    helper = "_require_finite" if slip == "helper-syntax" else "_require_tensor"
    said = [ln for ln in lines if f"{owner} calls `{helper}`" in ln]
    assert len(said) == 1, said
    assert said[0].startswith("A helper to fix: "), said[0]
    assert said[0].endswith(_cost(cost)), said[0]
    did = (
        "the grader left it out and graded the rest of the cell without it"
        if slip == "helper-syntax"
        else f"the grader graded {owner} with your stub"
    )
    assert did in said[0], said[0]
    text = "\n".join(lines)
    for wrong in (
        "not graded yet",
        "not attempted",
        "the rest of the cell ran",
        "defined in no cell",
        "What your outputs show",
        "What your function does",
    ):
        assert wrong not in text, (wrong, view)


@pytest.mark.slow
@pytest.mark.parametrize("slip", [*HELPER_SLIPS, "own-syntax", "untouched-stub"])
def test_every_cost_line_reads_the_same_in_the_terminal_the_widget_and_the_page(views, slip):
    """For each slip, the lines that carry a cost ("(costs …)") are the same lines, word for
    word, in all three views, and they add up to what the slip cost."""
    shown, raw = views
    _, _, owner, cost = SLIPS[slip]

    def costs(lines: list[str]) -> list[str]:
        return [re.sub(r"^.*? — ", "", ln) for ln in lines if "(costs " in ln]

    by_view = {view: costs(shown[slip][view]) for view in VIEWS}
    assert by_view["drills check"], shown[slip]["drills check"]
    for view in VIEWS[1:]:
        assert by_view[view] == by_view["drills check"], (view, by_view)
    total = sum(
        float(m)
        for ln in by_view["drills check"]
        for m in re.findall(r"\(costs ([\d.]+) point", ln)
    )
    assert total == pytest.approx(cost), by_view["drills check"]


@pytest.mark.slow
@pytest.mark.parametrize("view", VIEWS)
def test_a_function_left_as_its_stub_says_not_attempted_and_its_own_cost(views, view):
    """lld_rate left as the exercise's stub: "not attempted yet" may stay, with the points it
    costs (its own, nothing beyond), in every view."""
    shown, _ = views
    line = next(ln for ln in shown["untouched-stub"][view] if "not attempted yet" in ln)
    assert line.endswith(
        "not attempted yet: it still raises NotImplementedError (costs 1 point)"
    ), line


@pytest.mark.slow
@pytest.mark.parametrize("view", VIEWS)
def test_a_function_that_could_not_be_graded_shows_its_reason_and_its_cost(views, view):
    """group_advantages whose own def lost its colon: the SyntaxError, and a cost line."""
    shown, _ = views
    lines = shown["own-syntax"][view]
    assert any(
        "group_advantages is not defined: its definition does not compile" in ln for ln in lines
    )
    assert "Not graded: none of its checks counted (costs 2 points)" in lines, lines


@pytest.mark.slow
@pytest.mark.parametrize("view", ["Check my work", "feedback page"])
def test_a_syntax_errors_caret_stays_under_its_column_in_html(views, view):
    """The warning that names `_require_finite`'s SyntaxError holds the line and a caret under
    column 29: in HTML it must sit in a block that keeps spaces and lines (white-space: pre or
    pre-wrap, monospace), or the caret drifts to the left margin."""
    _, raw = views
    page = raw["helper-syntax"][view]
    blocks = re.findall(r'<(div|pre) class="(drills-why|msg[^"]*)">(.*?)</\1>', page, re.S)
    texts = [html.unescape(b) for _, _, b in blocks if "def _require_finite(x, name)" in b]
    assert texts, page[-3000:]
    code, caret = texts[0].splitlines()[-2:]
    assert code == "    def _require_finite(x, name)" and caret == " " * len(code) + "^", texts[0]
    if view == "Check my work":
        assert ".drills-report .drills-why{white-space:pre-wrap;font-family:monospace}" in page
    else:
        assert re.search(r"pre\.msg\{font-family:[^}]*monospace;[^}]*white-space:pre-wrap", page)


# -- the same, fast: made-up outcomes through evaluate.score and the three renderers -----------


def _scored(slip: str) -> evaluate.FunctionResult:
    """A function `f` of four 0.5-point checks whose helper `_h` is a stub (every check raises
    NotImplementedError) or does not compile (three checks raise NameError, one passes)."""
    cases = tuple(Case(id=f"c{k}", args=(float(k),)) for k in range(4))
    spec = FunctionSpec("f", cases, (), Split(100, 0, 0, reason="Values only."))
    inputs = [{"args": [float(k)], "kwargs": {"$dict": {}}} for k in range(4)]
    expected = [{"value": float(k)} for k in range(4)]
    if slip == "helper-stub":
        got = [{"raised": "NotImplementedError", "message": ""}] * 4
        note = {"stub_note": stubs.stub_text("f", ["_h"])}
    else:
        got = [{"value": 0.0}] + [{"raised": "NameError", "message": ""}] * 3
        note = {"broken_note": stubs.broken_text("f", ["_h"])}
    return evaluate.score("x", spec, 2.0, inputs, expected, got, None, {}, **note)


def _rendered(r: evaluate.FunctionResult, view: str) -> list[str]:
    if view == "drills check":
        return [line.strip() for line in evaluate.feedback_text(r).splitlines()]
    if view == "Check my work":
        report = {"score": r.score, "max_score": r.points, "functions": [r.to_json()]}
        return _lines_of(widgets.render_report(report))
    sub = SubmissionResult("s", "x", "x.ipynb", r.points, functions=[r])
    return _lines_of(feedback_html(sub))


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("slip", HELPER_SLIPS)
def test_a_helper_slip_is_graded_and_costed_never_not_graded_yet(slip, view):
    """A written function whose helper is a stub is attempted and graded: its loss is one
    "A helper to fix" line with its cost, the same line in every view; it was an error "not
    graded yet" with no cost line (and "not attempted" on the page's error path)."""
    r = _scored(slip)
    assert r.attempted and r.error is None, r
    cost = 2.0 if slip == "helper-stub" else 1.5
    assert r.points - r.score == pytest.approx(cost)
    lines = _rendered(r, view)
    said = [ln for ln in lines if "f calls `_h`" in ln]
    assert said == [evaluate.diagnosis_line(r.diagnoses[0])], (
        lines
    )  # the terminal's line, word for word
    assert said[0].startswith("A helper to fix: ") and said[0].endswith(_cost(cost)), said
    assert not any("not graded yet" in ln or "not attempted" in ln for ln in lines), lines
