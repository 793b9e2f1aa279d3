"""`drills author-check`: one notebook's checks, and a wrong reference caught by them.

Three wrong references are planted, each in a copy of the course (solutions/, tests/,
CHANGELOG.md): a boundary (03 `aggregate_loss` refusing max_len = T, `<` made `<=`), a sign
(02 `k3` negated) and a default (04 `turn_rewards` with beta = 0.1 where the notebook says
0.05). The anchors and the mutation score cannot see any of them (the anchors do not pass
max_len = T, nor leave beta out). Does the per-notebook command's reference stage fail on each,
with a message that names the reference, and pass on the unplanted copy?
"""

from __future__ import annotations

import shutil

import pytest
from conftest import ROOT

from autograder import author_check, cli

PLANTS = {
    "boundary": (
        "03_sum_vs_mean",
        '    "    if max_len < width:\\n",',
        '    "    if max_len <= width:\\n",',
        "aggregate_loss",
    ),
    "sign": (
        "02_clipped_estimators",
        '    "    return np.asarray(np.exp(d) - 1.0 - d, dtype=np.float64)\\n",',
        '    "    return -np.asarray(np.exp(d) - 1.0 - d, dtype=np.float64)\\n",',
        "k3",
    ),
    "default": (
        "04_rlef_turn_rewards",
        "beta: float = 0.05, max_turns: int = 3",
        "beta: float = 0.1, max_turns: int = 3",
        "turn_rewards",
    ),
}


def course_copy(tmp_path):
    """What the reference stage reads: the source notebooks, the tests, the CHANGELOG."""
    root = tmp_path / "course"
    shutil.copytree(ROOT / "solutions", root / "solutions")
    shutil.copytree(ROOT / "tests", root / "tests", ignore=shutil.ignore_patterns("fixtures"))
    shutil.copy(ROOT / "CHANGELOG.md", root / "CHANGELOG.md")
    return root


def plant(root, assignment: str, old: str, new: str) -> None:
    path = root / "solutions" / assignment / f"{assignment}.ipynb"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the plant's line is not (once) in {path.name}: {old}"
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(PLANTS))
def test_a_planted_wrong_reference_fails_the_reference_stage_naming_it(tmp_path, kind):
    """A boundary, a sign, a default: does each fail the reference stage, saying the
    reference may be wrong and naming the function?"""
    assignment, old, new, function = PLANTS[kind]
    root = course_copy(tmp_path)  # unplanted, it passes: tests/test_reference.py
    plant(root, assignment, old, new)
    said: list[str] = []
    (out,) = author_check.run(
        assignment, root=root, only=("reference",), say=lambda *a, **k: said.append(" ".join(a))
    )
    assert not out.ok, f"the {kind} plant in {function} passed the reference stage"
    # the whole log, not its tail: which failure lands in the last 4,000 characters depends on
    # how many other checks the plant trips and how long their messages are
    said_it = f"the reference may be wrong: {assignment} `{function}`"
    assert said_it in out.output, out.output[-4000:]
    assert function in out.failing, f"{function} is not among the failing {list(out.failing)}"
    assert any(function in line for line in said), "the console never named " + function
    summary = author_check.summary(assignment, [out])
    assert any("the reference may be wrong" in line for line in summary), summary
    if kind == "boundary":  # seven scores of aggregate_loss move: the scores stage sees it too
        (scores,) = author_check.run(
            assignment, root=root, only=("scores",), say=lambda *a, **k: None
        )
        assert not scores.ok and "aggregate_loss: scores moved" in scores.tail, scores.tail


def test_several_mistakes_failing_no_case_at_once_point_at_the_reference():
    """Two mistakes of one function that suddenly fail no case (the contract stage's pattern of
    a reference changed into them): does the summary say the reference may be wrong?"""
    output = (
        "E   AssertionError: k3: mistake inverted-ratio fails no case: add a case ...\n"
        "E   AssertionError: k3: mistake no-minus-one fails no case: add a case ...\n"
        "E   AssertionError: k1: mistake abs fails no case: add a case ...\n"
    )
    failed = author_check.Outcome("contract", False, 1.0, output[-100:], output)
    lines = author_check.summary("02", [failed])
    said = [x for x in lines if "the reference may be wrong" in x.lower()]
    assert len(said) == 1 and "2 mistakes of k3" in said[0], lines
    one = author_check.Outcome("contract", False, 1.0, "", output.splitlines()[2])
    assert not any("reference may be wrong" in x for x in author_check.summary("02", [one]))


def test_author_check_takes_a_notebook_by_its_number_and_refuses_an_unknown_one():
    """`drills author-check 02` is 02_clipped_estimators; an unknown number says which exist."""
    assert author_check.resolve("02") == "02_clipped_estimators"
    assert author_check.resolve("3") == "03_sum_vs_mean"
    with pytest.raises(author_check.AuthorCheckError, match="01_exact_kl"):
        author_check.resolve("99")


def test_every_stage_runs_for_the_one_notebook_only():
    """Does every pytest stage run with DRILLS_ONLY and name no other notebook's test file?"""
    stages = author_check.stages("02_clipped_estimators", ROOT)
    assert [s.name for s in stages] == list(author_check.STAGES)
    words = " ".join(" ".join(c) for s in stages for c in s.commands)
    others = [a for a in ("01_exact_kl", "03_sum_vs_mean", "test_a03") if a in words]
    assert not others, others


def test_scores_check_fails_when_a_catalogued_mistake_reaches_full_marks(monkeypatch, capsys):
    """A mistake that scores the points (the plant of a reference that agrees with it): does
    `drills cases --scores --check` exit 1 and say the reference may be wrong?"""
    monkeypatch.setattr(
        cli,
        "mistake_scores",
        lambda a, f: ({m.id: 1.0 if i == 0 else 0.5 for i, m in enumerate(f.mistakes)}, 0.85),
    )
    assert cli.main(["cases", "05_grpo_lld", "--scores", "--check"]) == 1
    err = capsys.readouterr().err
    assert "scores full marks" in err and "the reference may be wrong" in err, err


def test_scores_check_fails_when_scores_move_without_a_changelog_row(monkeypatch, capsys):
    """The CHANGELOG's newest score rows equal to the scores now: exit 0; one score moved: exit 1
    naming it. (The rows are the scores computed here, so the test holds whatever the live
    CHANGELOG says.)"""
    from autograder import assignments
    from autograder.assignments import catalogue

    a = "01_exact_kl"
    real = cli.mistake_scores
    recorded = {}
    for f in assignments.get(a).functions:
        scores, no_checks = real(a, f)
        recorded[(a, f.name)] = {**scores, "(no checks)": no_checks}
    monkeypatch.setattr(catalogue, "recorded_scores", lambda text: recorded)
    assert cli.main(["cases", a, "--scores", "--check"]) == 0, capsys.readouterr()
    capsys.readouterr()

    def moved(a, f):
        scores, no_checks = real(a, f)
        first = next(iter(scores))
        return {**scores, first: round(scores[first] + 0.01, 2)}, no_checks

    monkeypatch.setattr(cli, "mistake_scores", moved)
    assert cli.main(["cases", a, "--scores", "--check"]) == 1
    err = capsys.readouterr().err
    assert "scores moved since the CHANGELOG's last score row" in err, err


def test_recorded_scores_reads_the_newest_row_of_each_function():
    """Two entries quote a function's scores: is the first (newest) one read?"""
    from autograder.assignments import catalogue

    text = (
        "| a | `f` | 2 | `m` 0.5, `n` 1.2 | 1.7 |\n"
        "| a | `f` | 2 | `m` 0.4, `n` 1.2 | 1.7 |\n"
        "| a | `g` | 1 | 70/15/15 | 1/1/1 | 2 | 1 | 1e-05/1e-06 | 1/1 |\n"
    )
    assert catalogue.recorded_scores(text) == {("a", "f"): {"m": 0.5, "n": 1.2, "(no checks)": 1.7}}


@pytest.mark.slow
def test_a_planted_error_in_a_shared_helper_names_every_function_it_breaks(tmp_path):
    """The reference stage stopped at its first failure (pytest -x): an error planted in
    02's `_log_prob_arrays`, the helper of k1, clipped_k1, k2 and k3, named k1 only. Does the
    stage run every function and name each one it breaks, with why, in its output and in the
    summary, and does `drills author-check` then exit non-zero?"""
    root = course_copy(tmp_path)
    plant(
        root,
        "02_clipped_estimators",
        '    "    return arrays[0], arrays[1]\\n",',
        '    "    return 2.0 * arrays[0], arrays[1]\\n",',
    )
    said: list[str] = []
    (out,) = author_check.run(
        "02", root=root, only=("reference",), say=lambda *a, **k: said.append(" ".join(a))
    )
    assert not out.ok
    broken = ("k1", "clipped_k1", "k2", "k3")
    assert set(broken) <= set(out.failing), out.failing
    for function in broken:
        assert any("anchors" in check and reason for check, reason in out.failing[function]), (
            function,
            out.failing[function],
        )
    printed = "\n".join(said)
    summary = "\n".join(author_check.summary("02", [out]))
    for function in broken:
        assert f"        {function}: reproduces its anchors: {function}/" in printed, printed
        assert f" {function} (" in summary, summary


def test_failing_functions_reads_every_failed_line_of_the_short_summary():
    """The FAILED lines of several functions and one test of none: is each function listed,
    once per check, with the reason and without the repeated "the reference may be wrong"
    preamble?"""
    output = (
        "FAILED tests/test_reference.py::test_reference_reproduces_its_docstring_examples"
        "[02_clipped_estimators-k1] - AssertionError: the reference may be wrong: "
        "02_clipped_estimators `k1` (the solution cell of solutions/02/02.ipynb) does not give "
        "its docstring's example:\n"
        "FAILED tests/test_anchors.py::test_reference_reproduces_its_anchors"
        "[02_clipped_estimators-k2] - AssertionError: k2/scalars: the reference gives 2.2\n"
        "FAILED tests/test_reference.py::test_reference_keeps_the_properties_its_description_"
        "states[02_clipped_estimators-k3-k3 >= 0] - AssertionError: breaks k3 >= 0\n"
        "FAILED tests/test_anchors.py::test_a_planted_wrong_note_number_is_caught\n"
    )
    assert author_check.failing_functions(output) == {
        "k1": [("reproduces its docstring examples", "does not give its docstring's example")],
        "k2": [("reproduces its anchors", "k2/scalars: the reference gives 2.2")],
        "k3": [("keeps the properties its description states", "breaks k3 >= 0")],
        "test_a_planted_wrong_note_number_is_caught": [
            ("a planted wrong note number is caught", "")
        ],
    }


COLOURED = (
    "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m\n"
    "\x1b[0;31mValueError\x1b[0m: values is empty\n"
    "FAILED tests/test_notebooks.py::test_solution_runs[02_clipped_estimators]\n"
)


def test_notebook_stage_output_has_no_colour_codes_when_not_a_terminal(monkeypatch, capsys):
    """A failing notebook's kernel traceback is coloured: `drills author-check` printed its
    `\\x1b[0;31m` codes as text into a log or a pipe. Written to a non-terminal, is the output
    free of them, the words kept? (And kept coloured for a terminal.)"""
    monkeypatch.setattr(author_check, "_run", lambda cmd, env, root: (1, COLOURED))
    assert cli.main(["author-check", "02", "--stages", "notebook"]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "ValueError: values is empty" in out, out

    said: list[str] = []
    (coloured,) = author_check.run(
        "02",
        only=("notebook",),
        say=lambda *a, **k: said.append(" ".join(a)),
        colour=True,
    )
    assert "\x1b[0;31mValueError" in "\n".join(said)
    assert "\x1b" not in coloured.output  # what the summary reads for patterns
