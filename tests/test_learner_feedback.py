"""What a learner sees when something fails: the same explanation from `drills check`
and from the "Check my work" button, for the failures the catalogue of mistakes does not name.

Each test builds a learner's notebook from the released exercise with the reference solutions
filled in and one slip made, then reads both the terminal text and the widget's HTML.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from autograder import widgets
from autograder.engine import submission
from autograder.scoring import evaluate, stubs

ROOT = Path(__file__).resolve().parent.parent


def learner_notebook(tmp_path: Path, assignment: str, edit=None) -> Path:
    """The released ``assignment`` with the solution cells filled in, ``edit(gid, source)``
    applied to each."""
    src = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4).cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    nb = nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", 4)
    for c in nb.cells:
        meta = c.metadata.get("nbgrader", {})
        if meta.get("solution"):
            c.source = src[meta["grade_id"]]
            if edit:
                c.source = edit(meta["grade_id"], c.source)
    path = tmp_path / f"{assignment}.ipynb"
    nbformat.write(nb, path)
    return path


def terminal(path: Path) -> str:
    """What `drills check PATH` prints."""
    env = dict(os.environ)
    env.pop("DRILLS_SECRET", None)
    p = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "check", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def widget(path: Path) -> tuple[dict, str]:
    """The report the button reads and the HTML it shows, as plain text (tags dropped, runs of
    spaces made one)."""
    outcome = widgets.run_check(path)
    assert outcome.error is None, (outcome.error, outcome.detail)
    page = widgets.render_report(outcome.report, path)
    return outcome.report, re.sub(r"[ \t]+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def cell_number(path, grade_id: str) -> int:
    """The number JupyterLab shows a learner for the cell ``grade_id`` (counting from 1, every
    cell counted), read from the notebook, not written down."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return 1 + next(
        i
        for i, c in enumerate(cells)
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id
    )


def function_of(report: dict, name: str) -> dict:
    return next(f for f in report["functions"] if f["function"] == name)


# -- 1. a cell that does not compile -----------------------------------------------------------


def _broken_01(gid: str, source: str) -> str:
    if gid == "forward_kl":  # a missing colon
        return source.replace(
            "def forward_kl(policy, reference):", "def forward_kl(policy, reference)"
        )
    if gid == "reverse_kl":  # a non-breaking space pasted into the indentation of line 11
        return source.replace("        if q == 0:", "\u00a0       if q == 0:")
    return source


@pytest.mark.slow
def test_a_cell_that_does_not_compile_is_a_syntax_error_with_its_line_not_not_attempted(tmp_path):
    """A missing colon, and a non-breaking space that looks like a space: do `drills check` and
    the button both say SyntaxError with the cell and the line, name the invisible character
    and its position, and never call the function "not attempted yet"?"""
    path = learner_notebook(tmp_path, "01_exact_kl", _broken_01)
    text = terminal(path)
    report, page = widget(path)
    fk, rk = cell_number(path, "forward_kl"), cell_number(path, "reverse_kl")
    for shown in (text, page):
        assert "not attempted" not in shown
        assert f"SyntaxError in your cell 'forward_kl' (cell {fk} of the notebook), line 1" in shown
        assert "expected ':'" in shown
        assert (
            f"SyntaxError in your cell 'reverse_kl' (cell {rk} of the notebook), line 11" in shown
        )
        assert "line 11, column 1: a non-breaking space (U+00A0): type a plain space" in shown
    assert "0 / 0" not in page  # no "0 of 0 checks" for a function that never ran
    assert function_of(report, "forward_kl")["score"] == 0
    assert function_of(report, "log_ratios")["score"] == 2  # the cell that compiles is graded


def test_syntax_problem_names_each_lookalike_character_and_where_it_is():
    """Zero-width space, curly quotes: named with line and column, and none reported for a cell
    that compiles (a curly quote in a string is fine)?"""
    bad = "x = 1\ny = \u2018a\u2019\n\u200bz = 2\n"
    text = submission.syntax_problem(bad, "g", 4)
    assert text.startswith("SyntaxError in your cell 'g' (cell 4 of the notebook), line 2")
    assert (
        "line 2, column 5: a curly opening quote ‘ (U+2018): type a straight quote ' instead"
        in text
    )
    assert "line 3, column 1: a zero-width space (U+200B): delete it" in text
    assert submission.syntax_problem("s = '\u2018ok\u2019'\n", "g", 4) is None


def _broken_log_ratios_cell(gid: str, source: str) -> str:
    if gid == "log_ratios":  # the cell that also defines the helper _check_distributions
        return source.replace(
            "def log_ratios(policy, reference):", "def log_ratios(policy, reference)"
        )
    return source


def _broken_check_distributions(gid: str, source: str) -> str:
    if gid == "log_ratios":  # the helper's own def loses its colon
        return source.replace(
            "def _check_distributions(policy, reference, allow_zeros):",
            "def _check_distributions(policy, reference, allow_zeros)",
        )
    return source


@pytest.mark.slow
def test_a_syntax_error_costs_the_definition_it_is_in_not_its_cell_or_the_callers(tmp_path):
    """01's `_check_distributions` lives in the log_ratios cell. A missing colon in log_ratios'
    def costs log_ratios only (the helper beside it still compiles and runs); a missing colon
    in the helper's def costs log_ratios once (the function of its cell, which calls it), and
    forward_kl and reverse_kl, which call it too, are graded with the reference helper. Do
    `drills check` and the button say which definition did not compile and where the helper
    was charged?"""
    path = learner_notebook(tmp_path, "01_exact_kl", _broken_log_ratios_cell)
    report, page = widget(path)
    lr = function_of(report, "log_ratios")
    assert lr["score"] == 0 and "its definition does not compile" in lr["error"], lr["error"]
    for name in ("forward_kl", "reverse_kl"):
        f = function_of(report, name)
        assert f["score"] == f["points"], (name, f["diagnoses"])

    (tmp_path / "helper").mkdir()
    path = learner_notebook(tmp_path / "helper", "01_exact_kl", _broken_check_distributions)
    text = terminal(path)
    report, page = widget(path)
    lr = function_of(report, "log_ratios")
    assert lr["score"] < lr["points"]
    assert [d["id"] for d in lr["diagnoses"]][:1] == ["broken-helper"]
    said = "Your `_check_distributions` does not compile: that is charged once, to log_ratios"
    assert said in text and said in page
    assert "the definition of `_check_distributions` does not compile" in text
    for name in ("forward_kl", "reverse_kl"):
        f = function_of(report, name)
        assert f["score"] == f["points"], (name, f["diagnoses"])
        assert "graded with the reference `_check_distributions`" in f["note"]


# -- 2. a helper left as a stub ----------------------------------------------------------------


def _stub_require_tensor(gid: str, source: str) -> str:
    if gid != "group_advantages":
        return source
    head, rest = source.split("def _require_finite", 1)
    head = re.sub(
        r"### BEGIN SOLUTION.*?### END SOLUTION",
        "# YOUR CODE HERE\n    raise NotImplementedError()",
        head,
        flags=re.S,
    )
    return head + "def _require_finite" + rest


@pytest.mark.slow
def test_a_helper_left_as_a_stub_is_charged_once_to_the_function_of_its_cell(tmp_path):
    """05 with `_require_tensor` still the stub. It is given in group_advantages' cell: that
    function raises NotImplementedError and is told which helper to write, with its cost
    (never "not attempted yet"); the other functions that call it are graded with the reference helper,
    at full marks, and told so. Do `drills check` and the button say both?"""
    path = learner_notebook(tmp_path, "05_grpo_lld", _stub_require_tensor)
    text = terminal(path)
    report, page = widget(path)
    said = "group_advantages calls `_require_tensor`"
    assert said in text and said in page
    assert function_of(report, "group_advantages")["score"] == 0
    charged = "Your `_require_tensor` still raises NotImplementedError: that is charged once, to group_advantages"
    for name in ("sequence_logprobs", "likelihood_change", "lld_rate"):
        f = function_of(report, name)
        assert f["score"] == f["points"], (name, f["diagnoses"])
        assert charged in f["note"], name
        assert f"{name} calls `_require_tensor`" not in text
    for shown in (text, page):
        assert "not attempted" not in shown
        assert (
            "which still raises NotImplementedError: the grader graded group_advantages with "
            "your stub" in shown
        )
        assert charged in shown


def test_stub_callees_follow_calls_through_written_helpers_but_not_into_a_stub_function():
    """A written function reaching a stub through another written helper: named; a function
    that is itself the stub (not attempted): nothing named; a helper defined but not called:
    not named."""
    cell = (
        "def _a(x):\n    '''doc'''\n    raise NotImplementedError()\n\n"
        "def _b(x):\n    return _a(x)\n\n"
        "def _unused(x):\n    raise NotImplementedError\n\n"
        "def f(x):\n    return _b(x) + 1\n\n"
        "def g(x):\n    raise NotImplementedError()\n"
    )
    defs = stubs.top_level_functions([cell])
    assert stubs.stub_callees(defs, "f") == ["_a"]
    assert stubs.stub_callees(defs, "g") == []
    assert stubs.is_stub(defs["_unused"]) and not stubs.is_stub(defs["_b"])


def test_the_in_kernel_engine_names_a_stub_helper_too(tmp_path):
    """nbgrader's hidden-test cells (grade_cell) read the kernel's functions, whose source
    inspect finds: is the stub helper named there as well?"""
    probe = tmp_path / "stub_probe.py"
    probe.write_text(
        "def _h(x):\n    raise NotImplementedError()\n\n\ndef f(x):\n    return _h(x)\n"
    )
    ns = runpy.run_path(str(probe))
    assert stubs.live_stub_callees(ns["f"], ns) == ["_h"]


def _lose_require_tensor(gid: str, source: str) -> str:
    """05 with the helper `_require_tensor` deleted from its cell (a learner who cut it)."""
    if gid != "group_advantages":
        return source
    out = re.sub(r"def _require_tensor\(.*?(?=\ndef )", "", source, count=1, flags=re.S)
    assert "def _require_tensor" not in out and out != source
    return out


def in_kernel(path: Path, tmp_path: Path, name: str) -> str:
    """What nbgrader's hidden-test cell for ``name`` (autograder.grade_cell, the in-kernel
    engine) prints, on the functions of ``path``'s import and solution cells run as a
    kernel runs them (from a file, so their source can be read, as a kernel's can)."""
    nb = nbformat.read(path, 4)
    cells = [
        c.source
        for c in nb.cells
        if c.cell_type == "code"
        and (
            c.metadata.get("nbgrader", {}).get("solution")
            or c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("setup")
        )
    ]
    module = tmp_path / "kernel_cells.py"
    module.write_text("\n\n".join(cells))
    ns = runpy.run_path(str(module))
    import autograder

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        autograder.grade_cell("05_grpo_lld", name, ns[name])
    return out.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize(
    "edit, said",
    [
        (_stub_require_tensor, "group_advantages calls `_require_tensor`"),
        (_lose_require_tensor, "name '_require_tensor' is not defined"),
    ],
    ids=["stub", "lost"],
)
def test_a_stubbed_or_lost_helper_is_named_alike_by_the_terminal_the_button_and_the_kernel(
    tmp_path, edit, said
):
    """05 with `_require_tensor` left a stub, or deleted: do `drills check`, the button's
    rendered HTML and nbgrader's in-kernel hidden-test cell all name the helper, in the same
    words, for group_advantages, and give it 0 points?"""
    path = learner_notebook(tmp_path, "05_grpo_lld", edit)
    text = terminal(path)
    report, page = widget(path)
    kernel = in_kernel(path, tmp_path, "group_advantages")
    for where, shown in (("drills check", text), ("the button", page), ("grade_cell", kernel)):
        assert said in shown, where
        assert "not attempted" not in shown, where
    assert function_of(report, "group_advantages")["score"] == 0
    assert kernel.startswith("group_advantages: 0 / ")


# -- 3. a near miss ----------------------------------------------------------------------------


def _epsilon_01(gid: str, source: str) -> str:
    if gid != "forward_kl":
        return source
    source = source.replace("        if q == 0:\n            return math.inf\n", "")
    return source.replace(
        "terms.append(p * math.log(p / q))", "terms.append(p * math.log((p + 1e-4) / (q + 1e-4)))"
    )


def _float16_03(gid: str, source: str) -> str:
    return source.replace(
        "v = np.asarray(values, dtype=np.float64)", "v = np.asarray(values, dtype=np.float16)"
    )


NEAR = re.compile(
    r"A near miss: (on (\d+) of the (\d+) failed checks )?your values are close to the expected "
    r"ones but outside the stated tolerance \(\|yours − expected\| ≤ 1e-06 \+ 1e-05 · "
    r"\|expected\|\)\. The largest (?:relative error|error \(the expected value is near 0\)) is "
    r"([0-9.e+-]+), against a tolerance of "
    r"([0-9.e+-]+) there: look for an epsilon"
)


@pytest.mark.slow
@pytest.mark.parametrize(
    "assignment, edit, name, some",
    [
        ("01_exact_kl", _epsilon_01, "forward_kl", True),
        ("03_sum_vs_mean", _float16_03, "masked_mean", False),
    ],
)
def test_a_near_miss_gives_its_relative_error_against_the_tolerance_without_hidden_values(
    tmp_path, assignment, edit, name, some
):
    """An epsilon of 1e-4 inside 01's log (and q = 0 no longer infinite), float16 arithmetic in
    03: do `drills check` and the button say "near miss", the largest relative error against
    the tolerance, and where to look (epsilon, float32, clamp), where they used to name a
    factor of 1× or nothing; and is no generated case's value shown?"""
    path = learner_notebook(tmp_path, assignment, edit)
    text = terminal(path)
    report, page = widget(path)
    f = function_of(report, name)
    assert 0 < f["score"] < f["points"]
    for shown in (text, page):
        m = NEAR.search(shown)
        assert m, shown
        assert bool(m.group(1)) == some  # 01: the q = 0 case is not a near miss
        if some:  # and it is named, so that the learner looks at it too
            assert re.search(r"further off: [^.]*reference-zero", shown)
        assert 1 < float(m.group(4)) / float(m.group(5)) <= evaluate.NEAR_MISS_FACTOR
        assert "1×" not in shown
    hidden = [c for c in f["cases"] if c["hidden"]]
    assert hidden and all(c["expected"] is None and c["got"] is None for c in hidden)
    assert f["diagnoses"][0]["id"] == "near-miss"


def test_a_near_miss_is_not_claimed_for_values_far_off_or_inside_the_tolerance():
    """near_miss: a value 1000 times the tolerance off, NaN for a number, a wrong shape: not a
    near miss; 3 times the tolerance: one, with its relative error."""
    from autograder import assignments

    fspec = assignments.get("01_exact_kl").function("forward_kl")  # rtol 1e-5, atol 1e-6
    cases = fspec.cases
    expected = [{"value": 2.0}] * 4
    got = [
        {"value": 2.0 * (1 + 3e-5)},  # 3e-5 relative, the tolerance there is 1.05e-5
        {"value": 2.0 * (1 + 1e-2)},
        {"value": {"$float": "nan"}},
        {"value": [2.0]},
    ]
    nm = evaluate.near_miss(fspec, list(range(4)), expected, got)
    assert nm is not None and nm.cases == [0] and nm.relative
    assert nm.error == pytest.approx(3e-5) and nm.tolerance == pytest.approx(
        cases[0].rtol + cases[0].atol / 2
    )
    assert evaluate.near_miss(fspec, [1, 2, 3], expected, got) is None


def test_a_near_miss_among_checks_further_off_offers_no_cause():
    """One near miss among twelve failed checks (a truncated series, exact near 0 and far off
    elsewhere): the line says where values are close and names the others, but does not send
    the learner to an epsilon, float32 or a clamp, which would move most values a little;
    with the near misses the majority, the causes are offered. Catches a cause that the
    other failed checks contradict."""
    nm = evaluate.NearMiss([0], 3.3e-6, 1e-6, False, 1e-5, 1e-6)
    others = [f"case-{k}" for k in range(11)]
    text = evaluate.near_miss_text(nm, 12, others)
    assert "on 1 of the 12 failed checks" in text and "further off: case-0" in text
    assert "epsilon" not in text and "float32" not in text and "clamp" not in text
    most = evaluate.NearMiss(list(range(11)), 3.3e-6, 1e-6, False, 1e-5, 1e-6)
    assert evaluate.NEAR_MISS_CAUSES in evaluate.near_miss_text(most, 12, ["case-11"])


# -- 4. self-checks that show both values and agree with the grader --------------------------


def run_self_check(
    tmp_path: Path, monkeypatch, assignment: str, function: str, edit=None
) -> BaseException | None:
    """Run, in this process, the learner's notebook up to the self-check cell under
    ``function`` (setup and exploration-tools cells, the solution cells, then that self-check);
    what it raised, or None. The exploration skips itself as under nbgrader."""
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    monkeypatch.chdir(tmp_path)
    path = learner_notebook(tmp_path, assignment, edit)
    cells = [c for c in nbformat.read(path, 4).cells if c.cell_type == "code"]
    ns: dict = {}
    for k, c in enumerate(cells):
        meta = c.metadata.get("nbgrader", {})
        if meta.get("grade"):
            continue
        exec(compile(c.source, f"<cell {k}>", "exec"), ns)  # noqa: S102 (the course's own cells)
        if meta.get("grade_id") == function:
            try:
                exec(compile(cells[k + 1].source, "<self-check>", "exec"), ns)  # noqa: S102
            except Exception as e:  # noqa: BLE001 (returned to the test)
                return e
            return None
    raise AssertionError(f"no solution cell {function!r}")


def _unweighted_forward_kl(gid: str, source: str) -> str:
    return source.replace(
        "terms.append(p * math.log(p / q))", "terms.append(math.log(p / q) / len(policy))"
    )


def test_01_forward_kl_self_check_shows_the_learners_value_and_the_expected_one(
    tmp_path, monkeypatch
):
    """The self-check under forward_kl used to fail with a bare `AssertionError:`. With the
    unweighted average: does it show the call, the learner's value and the expected one?"""
    err = run_self_check(tmp_path, monkeypatch, "01_exact_kl", "forward_kl", _unweighted_forward_kl)
    assert isinstance(err, AssertionError)
    text = str(err)
    assert "forward_kl([0.1, 0.9], [0.5, 0.5])" in text
    assert "returned -0.510826" in text and "expected 0.368064" in text
    assert "1e-06 + 1e-05 · |expected|" in text


def _numpy_log_ratios(gid: str, source: str) -> str:
    return source.replace(
        "return [math.log(p / q) for p, q in zip(policy, reference)]",
        "return np.log(np.asarray(policy) / np.asarray(reference))",
    )


def _tensor_likelihood_change(gid: str, source: str) -> str:
    return source.replace(
        "return float((logp_after - logp_before)[c].mean())",
        "return (logp_after - logp_before)[c].mean()",
    )


def _index_not_mask(gid: str, source: str) -> str:
    return source.replace(
        "return float((logp_after - logp_before)[c].mean())",
        "return float((logp_after - logp_before)[correct].mean())",
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "assignment, function, edit",
    [
        ("01_exact_kl", "log_ratios", _numpy_log_ratios),
        ("05_grpo_lld", "likelihood_change", _tensor_likelihood_change),
    ],
)
def test_the_self_check_accepts_what_the_grader_accepts(
    tmp_path, monkeypatch, assignment, function, edit
):
    """A NumPy array where 01 expects a list used to crash the self-check ("truth value of an
    array is ambiguous") while the grader gave full marks; a 0-d tensor where 05 expects a
    float passed the grader while the self-check demanded a float. Do both now pass both,
    and does 05's text state the rule?"""
    assert run_self_check(tmp_path, monkeypatch, assignment, function, edit) is None
    path = learner_notebook(tmp_path, assignment, edit)
    report, _ = widget(path)
    f = function_of(report, function)
    assert f["score"] == f["points"], f
    if assignment == "05_grpo_lld":
        text = (ROOT / "exercises" / assignment / f"{assignment}.ipynb").read_text()
        assert "a 0-d tensor holding" in text and "the same value passes too" in text


@pytest.mark.slow
def test_an_integer_mask_used_as_indices_loses_formula_marks_and_is_named(tmp_path, monkeypatch):
    """`(after - before)[correct]` with a 0/1 integer `correct` picks entries by position
    (-0.5 instead of 0.125 on (1, 0, 1)); it used to get full marks. Does it lose formula
    marks, with the mistake named by `drills check` and the button, and does the self-check
    show both values?"""
    err = run_self_check(tmp_path, monkeypatch, "05_grpo_lld", "likelihood_change", _index_not_mask)
    assert isinstance(err, AssertionError)
    assert "returned -0.5" in str(err) and "expected 0.125" in str(err)
    path = learner_notebook(tmp_path, "05_grpo_lld", _index_not_mask)
    text = terminal(path)
    report, page = widget(path)
    f = function_of(report, "likelihood_change")
    formula = next(k for k in f["kinds"] if k["kind"] == "value")
    assert formula["score"] < formula["points"]
    assert f["mistake"] == "index-not-mask"
    parts = " · ".join(f"{k['label']} {k['score']:g} / {k['points']:g}" for k in f["kinds"])
    for shown in (text, page):
        assert "Recognised mistake: you indexed with the integer 0/1 `correct`" in shown
        assert parts in shown  # the points per part, in the terminal and in the widget


def test_selfcheck_compares_as_the_grader_and_lets_a_stub_say_not_implemented():
    """SelfCheck.value: a tuple or an array where a list is expected passes, a value outside
    the stated tolerance fails with both values shown; SelfCheck.raises: a stub's
    NotImplementedError stays NotImplementedError (an exercise's self-checks fail only with
    it), a missing ValueError is said."""
    from autograder.selfcheck import SelfCheck

    check = SelfCheck("01_exact_kl")

    def log_ratios(policy, reference):
        return policy

    check.value(log_ratios, (0.5, 0.25), None, expected=[0.5, 0.25])
    check.value(log_ratios, np.array([0.5, 0.25]), None, expected=[0.5, 0.25])
    check.value(log_ratios, [0.5 * (1 + 5e-6)], None, expected=[0.5])  # inside 1e-6 + 1e-5·|x|
    with pytest.raises(AssertionError, match=r"returned \[0\.5001\] \(shape \(1,\)\)"):
        check.value(log_ratios, [0.5001], None, expected=[0.5])

    def stub(*args):
        raise NotImplementedError()

    stub.__name__ = "log_ratios"
    with pytest.raises(NotImplementedError):
        check.raises(ValueError, stub, [], [])
    with pytest.raises(AssertionError, match="should raise ValueError; it returned"):
        check.raises(ValueError, log_ratios, [], [])


# -- 6. points per part in the widget ----------------------------------------------------------


def test_the_widget_shows_the_points_per_part_as_the_terminal_does():
    """The formula / edge cases / input checks split: does the button print it under each
    function's points, with the terminal's labels and numbers?"""
    kinds = [
        evaluate.KindScore("value", "the formula", 70, 2.1, 1.4, 3, 4),
        evaluate.KindScore("edge", "edge cases", 15, 0.45, 0.45, 2, 2),
        evaluate.KindScore("invalid", "input checks", 15, 0.45, 0.0, 0, 3),
    ]
    report = {
        "score": 1.85,
        "max_score": 3,
        "functions": [
            {
                "function": "f",
                "points": 3,
                "score": 1.85,
                "attempted": True,
                "kinds": [evaluate.plain(k) for k in kinds],
                "cases": [{"id": "c", "passed": False, "note": "n"}],
            }
        ],
    }
    page = html.unescape(re.sub(r"<[^>]+>", " ", widgets.render_report(report)))
    assert evaluate.kinds_text(kinds) in page


def test_the_widget_labels_diagnoses_as_the_terminal_does():
    """The widget keeps its own copy of the labels (it must not import the scoring layer
    when the notebook loads): is it the terminal's?"""
    assert widgets.DIAGNOSIS_LABELS == evaluate.DIAGNOSIS_LABELS


def test_06_says_of_a_python_loop_in_token_scores_what_the_grader_does():
    """The grader gives a correct double loop in token_scores full points (test_a06_nthr's
    test_double_loop_token_scores_gets_full_marks): does the released 06, text and the
    function's docstring alike, say so, and never state "no Python loop" as a rule?"""
    nb = nbformat.read(ROOT / "exercises" / "06_nthr" / "06_nthr.ipynb", 4)
    cell = next(
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "token_scores"
    )
    text = " ".join(c.source for c in nb.cells)
    assert "no Python loop" not in text
    docstring = re.sub(r"\s+", " ", cell.source)
    assert "the grader checks the values only: a loop earns the same points" in docstring
    assert "a double loop earns the same points" in re.sub(r"\s+", " ", text)


def test_the_feedback_page_keeps_a_syntax_errors_caret_under_its_column(tmp_path):
    """The page printed a syntax error's line and caret in a paragraph, where HTML collapses
    the spaces that put the caret under the column: is the message kept line for line?"""
    from autograder.course.grade_cli import check_notebook
    from autograder.course.report import feedback_html

    a = "01_exact_kl"
    nb = json.loads(
        (Path(__file__).resolve().parent.parent / "solutions" / a / f"{a}.ipynb").read_text()
    )
    cell = next(
        c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "forward_kl"
    )
    src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    cell["source"] = src.replace(
        "def forward_kl(policy, reference):", "def forward_kl(policy, reference)"
    )
    path = tmp_path / f"{a}.ipynb"
    path.write_text(json.dumps(nb))
    page = feedback_html(check_notebook(path, a))
    blocks = re.findall(r"<pre class=\"msg[^\"]*\">(.*?)</pre>", page, re.S)
    with_caret = [b for b in blocks if re.search(r"\n +\^", html.unescape(b))]
    assert with_caret, page[:3000]
    assert "def forward_kl(policy, reference)" in html.unescape(with_caret[0])
