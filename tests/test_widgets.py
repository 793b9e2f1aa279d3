"""Does the "Check my work" button grade the right file and say clearly what it found?

(The browser test presses the real button in JupyterLab; these check the parts
behind it without a browser.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import widgets
from autograder.engine import submission

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = ROOT / "exercises" / "01_exact_kl" / "01_exact_kl.ipynb"
SOURCE = ROOT / "solutions" / "01_exact_kl" / "01_exact_kl.ipynb"


def _learner_notebook(tmp_path: Path, edit=None) -> Path:
    """The student version of 01 with the solution cells filled in (and optionally one edit)."""
    src = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in nbformat.read(SOURCE, 4).cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    nb = nbformat.read(EXERCISE, 4)
    for c in nb.cells:
        gid = c.metadata.get("nbgrader", {}).get("grade_id")
        if c.metadata.get("nbgrader", {}).get("solution"):
            c.source = src[gid]
            if edit:
                c.source = edit(gid, c.source)
    path = tmp_path / "01_exact_kl.ipynb"
    nbformat.write(nb, path)
    return path


def test_check_my_work_prefers_the_session_notebook_over_the_default_name(tmp_path, monkeypatch):
    """When the learner renamed their copy, does the button grade the notebook JupyterLab has open
    (JPY_SESSION_NAME) rather than a stale <assignment>.ipynb beside it?"""
    (tmp_path / "01_exact_kl.ipynb").write_text("{}")
    mine = tmp_path / "01_exact_kl-Copy1.ipynb"
    mine.write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", str(mine))
    assert widgets.notebook_path("01_exact_kl", cwd=tmp_path) == mine.resolve()


def test_check_my_work_falls_back_to_the_assignment_file_outside_jupyterlab(tmp_path, monkeypatch):
    """Without a usable JPY_SESSION_NAME (nbclient, a classic runner, a name that is not a notebook),
    does the button use ./<assignment>.ipynb, and report None when there is none?"""
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "console-1"))
    assert widgets.notebook_path("01_exact_kl", cwd=tmp_path) is None
    (tmp_path / "01_exact_kl.ipynb").write_text("{}")
    assert (
        widgets.notebook_path("01_exact_kl", cwd=tmp_path)
        == (tmp_path / "01_exact_kl.ipynb").resolve()
    )
    monkeypatch.delenv("JPY_SESSION_NAME")
    assert (
        widgets.notebook_path("01_exact_kl", cwd=tmp_path)
        == (tmp_path / "01_exact_kl.ipynb").resolve()
    )


@pytest.mark.slow
def test_check_my_work_names_the_mistake_of_an_unweighted_average(tmp_path):
    """Does the button's report show the score line, the lost points and the recognised mistake for
    a forward_kl that averages the log ratios without weights?"""
    path = _learner_notebook(
        tmp_path,
        lambda gid, s: s.replace(
            "terms.append(p * math.log(p / q))", "terms.append(math.log(p / q) / len(policy))"
        ),
    )
    outcome = widgets.run_check(path)
    assert outcome.error is None, (outcome.error, outcome.detail)
    report = outcome.report
    fk = next(f for f in report["functions"] if f["function"] == "forward_kl")
    assert 0 < fk["score"] < fk["points"]
    page = widgets.render_report(report, path)
    assert f"Score: {report['score']:g} / {report['max_score']:g} points" in page
    assert "Recognised mistake:" in page and "unweighted" in fk["diagnosis"]
    assert "full marks" not in page


@pytest.mark.slow
def test_check_my_work_gives_full_marks_to_the_solution_and_zero_to_stubs(tmp_path):
    """Does the report say full marks for the solved notebook and 'not attempted' for the stubs?"""
    solved = widgets.run_check(_learner_notebook(tmp_path))
    assert solved.report["score"] == solved.report["max_score"] > 0
    assert "(full marks)" in widgets.render_report(solved.report)

    stub = widgets.run_check(EXERCISE)
    assert stub.report["score"] == 0
    page = widgets.render_report(stub.report)
    assert page.count("not attempted yet") == len(stub.report["functions"])


def test_check_my_work_explains_a_notebook_it_cannot_read(tmp_path):
    """A broken .ipynb file: does the learner get a message and the command's own words, not a
    traceback or an empty output?"""
    bad = tmp_path / "01_exact_kl.ipynb"
    bad.write_text("{not json")
    outcome = widgets.run_check(bad)
    assert outcome.report is None
    assert "exit status" in outcome.error and "not valid JSON" in outcome.detail
    page = widgets.render_error(outcome.error, outcome.detail)
    assert "Could not check your work" in page and "not valid JSON" in page


def test_check_my_work_escapes_text_from_the_report():
    """Function names, notes, diagnoses and warnings are text, not markup: is every one of them
    escaped before it goes into the notebook's HTML output?"""
    report = {
        "assignment": "x",
        "score": 0,
        "max_score": 1,
        "warnings": ["<b>w</b>"],
        "functions": [
            {
                "function": "<script>f</script>",
                "points": 1,
                "score": 0,
                "attempted": True,
                "diagnosis": "<img src=x>",
                "cases": [{"id": "c", "passed": False, "note": "<i>n</i>"}],
            }
        ],
    }
    page = widgets.render_report(report)
    assert "<script>" not in page and "<img" not in page and "<i>n</i>" not in page
    assert "&lt;script&gt;" in page and "&lt;b&gt;w&lt;/b&gt;" in page


def test_check_my_work_warms_the_outcome_cache_once_per_kernel(tmp_path, monkeypatch):
    """Showing the button starts `drills warm ASSIGNMENT --serve` (the check server) in the
    background: once per kernel and assignment (a re-run cell does not start another), and
    never when DRILLS_WARM_CACHE=off? When its stdin ends (the kernel is gone), does it finish
    the warm-up and exit?"""
    monkeypatch.setenv("DRILLS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DRILLS_CACHE", raising=False)
    monkeypatch.setattr(widgets, "_WARMING", {})
    monkeypatch.setenv("DRILLS_WARM_CACHE", "off")
    assert widgets.start_warm("01_exact_kl") is None
    monkeypatch.delenv("DRILLS_WARM_CACHE")
    proc = widgets.start_warm("01_exact_kl")
    assert proc is not None and proc.args == widgets.warm_command("01_exact_kl")
    assert widgets.start_warm("01_exact_kl") is proc
    proc.stdin.close()
    assert proc.wait(timeout=300) == 0
    assert list((tmp_path / "cache").rglob("*.json"))  # it wrote the outcomes


def test_warm_up_starts_only_for_a_learner_in_jupyterlab(tmp_path, monkeypatch):
    """Every notebook calls warm_up in its first code cell: under nbgrader or nbclient
    (no JPY_SESSION_NAME) does it start nothing, so grading never pays for it?"""
    monkeypatch.setenv("DRILLS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(widgets, "_WARMING", {})
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert widgets.warm_up("01_exact_kl") is None and widgets._WARMING == {}
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "01_exact_kl.ipynb"))
    proc = widgets.warm_up("01_exact_kl")
    assert proc is not None and widgets._WARMING == {"01_exact_kl": proc}
    proc.stdin.close()
    assert proc.wait(timeout=300) == 0


def test_the_warm_worker_is_started_without_waiting_for_the_reference_outcomes(monkeypatch):
    """The check server starts its sandboxed worker (which imports numpy and torch) first and
    the reference outcomes (which import torch here too) beside it. Catches the worker's
    imports read from Grader.prepare, which computes the reference outcomes: the worker then
    started only once they were done, and a click soon after the setup cells waited for both
    in turn."""
    from autograder.course import grade_cli

    defaults = grade_cli.check_args("NOTEBOOK")
    grader = grade_cli.check_grader(defaults.timeout, defaults.budget, defaults.student)

    def no_prepare(assignment):
        raise AssertionError(f"the worker's imports waited for prepare({assignment!r})")

    monkeypatch.setattr(grader, "prepare", no_prepare)
    sub = submission.Submission(
        path=ROOT / "solutions" / "05_grpo_lld" / "05_grpo_lld.ipynb",
        student="warm",
        assignment="05_grpo_lld",
    )
    assert grader._preloads([sub]) == {("numpy", "torch")}


def test_a_check_waits_for_a_running_warm_up_but_not_forever(monkeypatch):
    """A click while the warm-up runs: does the check wait for it to finish (then reads its
    outcomes instead of computing them beside it), and give up after the time-out?"""
    quick = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    monkeypatch.setattr(widgets, "_WARMING", {"05_grpo_lld": quick})
    widgets.wait_for_warm("05_grpo_lld", timeout=120)
    assert quick.poll() == 0  # it was waited for, to the end
    stuck = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        monkeypatch.setattr(widgets, "_WARMING", {"06_nthr": stuck})
        widgets.wait_for_warm("06_nthr", timeout=0.2)
        assert stuck.poll() is None  # still running: the check went ahead without it
    finally:
        stuck.kill()
        stuck.wait()
    widgets.wait_for_warm("04_rlef_turn_rewards")  # none started: returns at once


# -- the check server (autograder/course/check_server.py) ---------------------------------------


def _without_times(report: dict) -> dict:
    """A report without the seconds each case took (the only thing two runs may differ in)."""
    if isinstance(report, dict):
        return {k: _without_times(v) for k, v in report.items() if k != "seconds"}
    if isinstance(report, list):
        return [_without_times(v) for v in report]
    return report


def _syntax_error(gid: str, source: str) -> str:
    return source.replace("def forward_kl(policy, reference):", "def forward_kl(policy, reference)")


def _unweighted(gid: str, source: str) -> str:
    return source.replace(
        "terms.append(p * math.log(p / q))", "terms.append(math.log(p / q) / len(policy))"
    )


@pytest.mark.slow
def test_the_check_server_answers_each_click_as_drills_check_does(tmp_path, monkeypatch):
    """From an empty outcome cache, clicks sent to the check server, the first while its
    warm-up runs: is each report the one `drills check --json` gives in a new process (a
    recognised mistake, whose known mistakes' outcomes the warm-up is computing; a cell that
    does not compile; full marks), the same on a second click, and is the server still there
    to answer after all of them?"""
    monkeypatch.setenv("DRILLS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DRILLS_CACHE", raising=False)
    monkeypatch.delenv("DRILLS_WARM_CACHE", raising=False)
    monkeypatch.setattr(widgets, "_WARMING", {})
    notebooks = {}
    for name, edit in (("mistake", _unweighted), ("syntax", _syntax_error), ("solved", None)):
        (tmp_path / name).mkdir()
        notebooks[name] = _learner_notebook(tmp_path / name, edit)
    proc = widgets.start_warm("01_exact_kl")
    assert proc is not None
    try:
        served = {n: widgets.ask_server("01_exact_kl", p) for n, p in notebooks.items()}
        again = widgets.ask_server("01_exact_kl", notebooks["mistake"])
        assert proc.poll() is None and widgets._WARMING["01_exact_kl"] is proc
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=300) == 0
    for name, path in notebooks.items():
        fresh = widgets.run_check(path)
        assert served[name] is not None and served[name].error is None, name
        assert _without_times(served[name].report) == _without_times(fresh.report), name
    assert _without_times(again.report) == _without_times(served["mistake"].report)
    fk = {f["function"]: f for f in served["mistake"].report["functions"]}["forward_kl"]
    assert "unweighted" in fk["diagnosis"]
    assert served["solved"].report["score"] == served["solved"].report["max_score"] > 0
    syntax = {f["function"]: f for f in served["syntax"].report["functions"]}["forward_kl"]
    assert "SyntaxError" in syntax["error"]


def test_the_warm_up_gives_way_to_a_click_between_two_mistakes(tmp_path, monkeypatch):
    """The check server computes the known mistakes in the background; while a click runs
    (its ``idle`` event clear) the warm-up must stop between two mistakes, keep nothing of
    the function it was on and hold no lock, so the click has the process to itself; the
    click's own thread computes them whatever the event. Catches a warm-up that finishes a
    whole function's mistakes (1.2 s of CPU for 05's sequence_logprobs) beside a click."""
    import threading

    from autograder.course import grade_cli
    from autograder.scoring import evaluate, memo

    monkeypatch.setenv("DRILLS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(memo, "_MUTANTS", memo._Bounded(64))
    defaults = grade_cli.check_args("NOTEBOOK")
    grader = grade_cli.check_grader(defaults.timeout, defaults.budget, defaults.student)
    lazy = grader.prepare("01_exact_kl").shared.mutants["forward_kl"]
    idle = threading.Event()  # clear: a click is being answered
    with evaluate.yielding_to(idle), pytest.raises(evaluate.Yielded):
        len(lazy)
    assert lazy._data is None and not lazy._lock.locked()
    clicks = threading.Thread(target=len, args=(lazy,))  # the click's thread: no yielding
    clicks.start()
    clicks.join(timeout=300)
    assert not clicks.is_alive(), "the click's own computation of the mistakes did not end"
    assert lazy._data is not None and len(lazy) == len(
        grader.prepare("01_exact_kl").specs["forward_kl"].mistakes
    )


def _fake_server(monkeypatch, code: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    monkeypatch.setattr(widgets, "_WARMING", {"01_exact_kl": proc})
    return proc


def test_a_server_that_answers_nonsense_is_dropped_and_the_click_runs_drills_check(
    tmp_path, monkeypatch
):
    """A check server that answers something other than a check's outcome (or has died): does
    the click get None (it then runs `drills check` itself), the server stopped and forgotten,
    never a report made from the nonsense?"""
    proc = _fake_server(monkeypatch, "import sys; sys.stdin.readline(); print('garbage')")
    assert widgets.ask_server("01_exact_kl", tmp_path / "x.ipynb", timeout=60) is None
    assert proc.poll() is not None and widgets._WARMING == {}
    assert widgets.ask_server("01_exact_kl", tmp_path / "x.ipynb") is None  # none left


def test_a_server_that_takes_too_long_is_stopped_and_the_click_says_so(tmp_path, monkeypatch):
    """A check that takes longer than the button's time-out: is the server stopped and the
    learner told that the check did not finish, as with a check in a new process?"""
    proc = _fake_server(monkeypatch, "import time; time.sleep(600)")
    outcome = widgets.ask_server("01_exact_kl", tmp_path / "x.ipynb", timeout=0.5)
    assert outcome is not None and outcome.report is None
    assert "did not finish within 0.5 seconds" in outcome.error
    assert proc.poll() is not None and widgets._WARMING == {}


def test_the_check_server_answers_a_bad_request_and_ends_with_its_input():
    """A line that is not a request gets an exit status 2 answer, not a crash; the end of stdin
    ends the server with status 0."""
    proc = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "warm", "01_exact_kl", "--quiet", "--serve"],
        input="not json\n",
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, DRILLS_WARM="off"),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout.strip())
    assert answer["returncode"] == 2 and answer["stderr"] == "bad request"


def test_the_setup_cells_self_check_starts_the_warm_up_for_a_learner_only(tmp_path, monkeypatch):
    """Every notebook makes its SelfCheck in the setup cell: in JupyterLab does that start the
    button's warm-up (so 01-04 get the whole session to prepare, not only the moment between
    the button's cell and the click), and under nbgrader or nbclient does it start nothing?"""
    from autograder.selfcheck import SelfCheck

    started = []
    monkeypatch.setattr(widgets, "start_warm", started.append)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    SelfCheck("03_sum_vs_mean")
    assert started == []
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "03_sum_vs_mean.ipynb"))
    SelfCheck("03_sum_vs_mean")
    assert started == ["03_sum_vs_mean"]


def test_a_click_goes_to_the_check_server_when_there_is_one(tmp_path, monkeypatch):
    """With this kernel's check server running, does a click show the server's answer (and not
    run `drills check` in a new process)?"""
    import IPython.display

    saved = tmp_path / "01_exact_kl.ipynb"
    saved.write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", str(saved))
    report = {"score": 5.0, "max_score": 7.0, "functions": [], "warnings": ["from the server"]}
    answer = json.dumps({"returncode": 0, "stdout": json.dumps(report), "stderr": ""})
    proc = _fake_server(monkeypatch, f"import sys; sys.stdin.readline(); print({answer!r})")
    monkeypatch.setattr(widgets, "run_check", lambda *a: pytest.fail("ran drills check"))
    shown: list = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **k: shown.extend(objs))
    widgets.check_my_work("01_exact_kl", namespace={})
    shown.pop().children[0].children[0].click()
    assert "Score: 5 / 7 points" in shown[-1].data and "from the server" in shown[-1].data
    proc.wait(timeout=60)


def test_a_torch_notebook_is_held_to_the_torch_click_target_whatever_its_name():
    """The click target (2.5 s where grading imports torch, 1 s otherwise) comes from the
    assignment registry: 07 imports torch and is a torch notebook though its name is not 05
    or 06. Checked against what the sandbox preloads for each notebook (its setup cells'
    imports), which is where a click pays for torch."""
    from autograder import assignments
    from autograder.engine import worker
    from autograder.notebooks import notebook

    for a in assignments.MODULES:
        setup = notebook.code_cells(notebook.read(notebook.source_path(a)), {"setup"})
        sandbox_torch = "torch" in worker.preload_for([(gid, src) for _, gid, src in setup])
        assert assignments.uses_torch(a) == sandbox_torch, a
    assert assignments.uses_torch("07_beyond_nthr")
    assert not assignments.uses_torch("01_exact_kl")
    with pytest.raises(KeyError, match="unknown assignment"):
        assignments.uses_torch("99_nothing")


def test_a_clicks_report_is_not_lost_when_the_warm_ups_quieting_ends_during_the_click():
    """The check server's warm-up quiets the reference notebook's cells (a torch import: seconds)
    while a click captures what `drills check --json` prints. With process-wide redirection
    the warm-up, ending first, put back the stream the click had replaced, and the click's
    report went to the real stdout: the learner read "drills check failed ... and gave no
    report" (seen at 4 spinners on 05). Is each thread's output its own?"""
    import io
    import threading

    from autograder.notebooks import streams

    saved = sys.stdout, sys.stderr
    try:
        streams.per_thread()
        quieting, click_started = threading.Event(), threading.Event()

        def warm_up():
            with streams.redirected(io.StringIO(), io.StringIO()):
                quieting.set()
                assert click_started.wait(timeout=60), "the click never started"
                print("a reference cell's output")

        t = threading.Thread(target=warm_up)
        t.start()
        assert quieting.wait(timeout=60), "the warm-up never started quieting"
        report = io.StringIO()
        with streams.redirected(report, io.StringIO()):
            click_started.set()
            t.join(timeout=60)
            assert not t.is_alive(), "the warm-up's quieting did not end"
            print('{"score": 1}')
        assert report.getvalue() == '{"score": 1}\n'
    finally:
        sys.stdout, sys.stderr = saved


@pytest.mark.slow
def test_the_click_benchmark_clicks_in_a_real_kernel_and_gets_drills_checks_report(tmp_path):
    """benchmarks/clicks.py, whose table docs/speed.md quotes, on 01 without load, once: does it
    still start a kernel as JupyterLab does, run the setup cells, click through the widget's
    own call and get the report a fresh `drills check --json` gives (it exits 1 when they
    differ)? Catches a benchmark left behind by a change of the notebooks or the widget."""
    p = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "clicks.py"),
            "--assignments",
            "01_exact_kl",
            "--loads",
            "0",
            "--after",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "DRILLS_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    rows = [line for line in p.stdout.splitlines() if line.startswith("| 01_exact_kl | 0 |")]
    assert len(rows) == 1, p.stdout
