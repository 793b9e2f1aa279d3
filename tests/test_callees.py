"""One slip, one charge.

A graded function that calls another graded function (shaped_reward → mean_sampled_log_ratio,
task_reward → extract_code, turn_rewards → task_reward → extract_code) is graded with the
reference callee in place of the learner's, in both engines: a slip in the callee costs points
only at the callee, and the caller's feedback says so.
"""

from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest
from class_fixture import exercise_with
from conftest import ROOT

from autograder.notebooks import notebook, reference
from autograder.scoring import evaluate, kernel, memo

# caller, callee, a slip in the callee (source appended to the cell that defines it)
SLIPS = {
    "mean_sampled_log_ratio": (
        "_drills_exact_mean = mean_sampled_log_ratio\n\n\n"
        "def mean_sampled_log_ratio(policy_logps, reference_logps):\n"
        "    return _drills_exact_mean(policy_logps, reference_logps) * 1.01 + 1e-3\n"
    ),
    "extract_code": (
        "def extract_code(response):\n"
        "    import re as _re\n\n"
        "    if not isinstance(response, str):\n"
        "        raise ValueError('response must be a str')\n"
        '    m = _re.search(r"```python\\n(.*?)```", response, _re.S)\n'
        "    return m.group(1) if m else None  # no parse check, trailing newline kept\n"
    ),
}
CALLERS = [
    ("03_sum_vs_mean", "shaped_reward", "mean_sampled_log_ratio"),
    ("04_rlef_turn_rewards", "task_reward", "extract_code"),
    ("04_rlef_turn_rewards", "turn_rewards", "extract_code"),
]


def _namespace_with_slip(assignment, callee):
    """The reference namespace (a copy) with the callee replaced by its slip, and every graded
    function re-defined in it, so that callers look the callee up there as a learner's do."""
    ns = dict(reference.namespace(assignment, ROOT))
    src = notebook.read(notebook.source_path(assignment, ROOT))
    for _, _, source in notebook.code_cells(src, {"solution"}):
        exec(compile(source, "<solution>", "exec"), ns)  # noqa: S102 (our own source notebook)
    exec(compile(SLIPS[callee], "<slip>", "exec"), ns)  # noqa: S102
    return ns


@pytest.mark.parametrize("assignment,caller,callee", CALLERS)
def test_callee_slip_is_charged_once_in_kernel(assignment, caller, callee):
    """In-kernel engine: the callee with a slip loses points; the caller, which calls it,
    keeps full marks and says it was graded with the reference callee."""
    ns = _namespace_with_slip(assignment, callee)
    slipped = kernel.grade_function(assignment, callee, ns[callee], namespace=ns, root=ROOT)
    assert slipped.score < slipped.points, "the slip must cost points at the callee"
    r = kernel.grade_function(assignment, caller, ns[caller], namespace=ns, root=ROOT)
    assert r.score == r.points, [c.id for c in r.cases if not c.passed]
    assert "Graded with the reference" in r.note and f"`{callee}`" in r.note
    assert r.note in evaluate.feedback_text(r)
    assert ns[callee].__code__.co_filename == "<slip>", "the learner's callee was not restored"


def test_caller_without_reference_callee_would_be_charged_twice():
    """The test above can fail: with the swap disabled (no callees in the inputs) the slip in
    mean_sampled_log_ratio costs points at shaped_reward too."""
    a, caller, callee = CALLERS[0]
    ns = _namespace_with_slip(a, callee)
    from autograder import assignments
    from autograder.cases import seeds

    fspec = assignments.get(a).function(caller)
    inputs = evaluate.materialize(a, fspec, seeds.course_secret(None))
    assert any("serve" in inp for inp in inputs)
    bare = [{k: v for k, v in inp.items() if k != "serve"} for inp in inputs]
    expected = memo.reference_outcomes(a, fspec, inputs, ROOT)
    got, _ = evaluate.run_cases(ns[caller], bare, ns)
    mutants = memo.mistake_outcomes(a, fspec, inputs, ROOT)
    r = evaluate.score(a, fspec, 1.0, bare, expected, got, None, mutants)
    assert r.score < r.points


def test_functions_that_call_nothing_else_are_served_nothing():
    """Served callees: what the reference reaches, less the function itself and the helpers
    of its own cell (its own code: a slip there is its own)."""
    from autograder.scoring import served

    assert served.served_names("03_sum_vs_mean", "masked_mean") == []  # _check_batch is its own
    assert served.served_names("03_sum_vs_mean", "aggregate_loss") == ["_check_batch"]
    assert served.served_names("04_rlef_turn_rewards", "extract_code") == []
    got = served.served_names("04_rlef_turn_rewards", "turn_rewards")
    # and 03's mean_sampled_log_ratio, which 04 asks the learner to copy: graded in 03
    assert set(got) == {"task_reward", "extract_code", "mean_sampled_log_ratio"}
    assert served.provided_names("04_rlef_turn_rewards") == {"mean_sampled_log_ratio"}
    assert served.served_names("05_grpo_lld", "group_advantages") == []
    assert set(served.served_names("05_grpo_lld", "lld_rate")) == {
        "_require_tensor",
        "_require_finite",
    }


def test_served_names_given_the_graded_functions_are_those_the_case_module_gives():
    """`drills grade` passes the graded functions it read from the outcome cache (so that the
    case module, torch for 05-07, is not imported for this): is every function served the same
    callees, and the same note written, as when they are read from the case module?"""
    from autograder import assignments
    from autograder.scoring import served

    notes = 0
    for a in assignments.MODULES:
        names = assignments.get(a).names
        for f in names:
            served._GRADED.clear()
            from_module = served._served_names(a, f, None, None)
            note = served.note(a, f)  # the graded functions read from the case module
            assert served.served_names(a, f, graded=names) == from_module, (a, f)
            assert served._served_names(a, f, None, names) == from_module, (a, f)
            assert served.note(a, f) == note, (a, f)  # those served_names was given
            notes += bool(note)
    assert notes, "no function has a note: the comparison compared nothing"


def test_callee_slip_is_charged_once_in_the_sandbox(tmp_path):
    """`drills check` (the sandboxed engine of `drills grade`): the same, from a notebook."""
    by_function = {}
    for a in ("03_sum_vs_mean", "04_rlef_turn_rewards"):
        src = notebook.read(notebook.source_path(a, ROOT))
        sources = [s for _, _, s in notebook.code_cells(src, {"solution"})]
        callee = "mean_sampled_log_ratio" if a.startswith("03") else "extract_code"

        def cell(functions, sources=sources, callee=callee):
            body = next(s for s in sources if all(f"def {f}(" in s for f in functions))
            return body + ("\n\n\n" + SLIPS[callee] if callee in functions else "")

        nb = exercise_with(a, cell)
        path = tmp_path / f"{a}.ipynb"
        nbformat.write(nb, str(path))
        proc = subprocess.run(
            [sys.executable, "-m", "autograder.cli", "check", "--json", str(path)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=600,
        )
        data = json.loads(proc.stdout)
        for f in data["functions"]:
            by_function[f["function"]] = f
    for _, caller, callee in CALLERS:
        assert by_function[callee]["score"] < by_function[callee]["points"]
        assert by_function[caller]["score"] == by_function[caller]["points"], caller
        assert f"`{callee}`" in by_function[caller]["note"]


def _namespace_with_stub_helper(assignment, helper):
    """The reference namespace (a copy) with the solution cells run in it, then ``helper``
    replaced by the exercise's stub (its source must be readable: written to a file)."""
    import importlib.util
    import linecache
    import tempfile
    from pathlib import Path

    ns = dict(reference.namespace(assignment, ROOT))
    src = notebook.read(notebook.source_path(assignment, ROOT))
    for _, gid, source in notebook.code_cells(src, {"solution"}):
        name = f"<cell {gid}>"  # as IPython does, so that inspect reads each cell's source
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        exec(compile(source, name, "exec"), ns)  # noqa: S102 (our own source notebook)
    folder = Path(tempfile.mkdtemp())
    (folder / "stub_helper.py").write_text(
        f"def {helper}(*args, **kwargs):\n    '''stub'''\n    raise NotImplementedError()\n"
    )
    spec = importlib.util.spec_from_file_location("stub_helper", folder / "stub_helper.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ns[helper] = module.__dict__[helper]
    return ns


def test_a_stub_helper_is_charged_once_in_kernel():
    """In-kernel engine (nbgrader's hidden-test cells): 05 with `_require_finite` a stub. It
    is given in group_advantages' cell: that function loses points and is told so; the other
    functions that call it are served the reference helper (full marks) and told where the
    stub was charged."""
    a = "05_grpo_lld"
    ns = _namespace_with_stub_helper(a, "_require_finite")
    charged = "Your `_require_finite` still raises NotImplementedError: that is charged once, to group_advantages"
    own = kernel.grade_function(a, "group_advantages", ns["group_advantages"], namespace=ns)
    assert own.score < own.points and charged in own.note, own.note
    for name in ("sequence_logprobs", "likelihood_change", "lld_rate"):
        r = kernel.grade_function(a, name, ns[name], namespace=ns, root=ROOT)
        assert r.score == r.points, (name, [c.id for c in r.cases if not c.passed])
        assert charged in r.note, (name, r.note)
