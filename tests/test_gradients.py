"""Gradient cases: a loss is graded by the gradient it gives, on both engines.

A function whose result is differentiated (spec's "gradient" kind: sequence_logprobs in 05,
clipped_surrogate, nll_on_correct and smaug_floor in 07) has cases that call ``.backward()``
on its result and compare the gradient of each input its docstring marks "with gradient",
and require no gradient (``.grad`` None or exactly zero) in each input it marks "detached".
The gradients are computed where the function runs (codec.outcome_of: the sandboxed child,
or nbgrader's kernel) and only plain data reaches the comparison.

The engine test grades real code, not replays: the reference with one line changed the way a
learner writes it, through `drills grade` (sandbox) and the in-kernel engine of nbgrader's
hidden-test cells.
"""

from __future__ import annotations

import ast
import json
import re

import nbformat
import nbgrader_course
import pytest
import torch
from conftest import ROOT, available_assignments, run_drills

from autograder import assignments
from autograder.cases import codec
from autograder.cases.spec import Case, FunctionSpec, Split
from autograder.notebooks import notebook
from autograder.scoring import kernel

ASSIGNMENTS = available_assignments()
FUNCTIONS = [(a, f) for a in ASSIGNMENTS for f in assignments.get(a).functions]
DIFFERENTIATED = [(a, f) for a, f in FUNCTIONS if f.of_kind("gradient")]


def _arg_lines(assignment: str, name: str) -> dict[str, str]:
    """The reference docstring's Args entries, by parameter name (continuation lines joined)."""
    doc = ast.get_docstring(notebook.solution_defs(assignment, ROOT)[name]) or ""
    args = doc.split("Args:", 1)[1].split("Returns:", 1)[0] if "Args:" in doc else ""
    out: dict[str, str] = {}
    last = None
    for line in args.splitlines():
        for part in line.split(";"):
            m = re.match(r"\s*(\w+): (.*)", part)
            if m and m.group(1) in notebook.parameters(assignment, name, ROOT):
                last = m.group(1)
                out[last] = m.group(2)
            elif last:
                out[last] += " " + part.strip()
    return out


def test_the_differentiated_functions_are_the_losses_and_what_enters_them():
    """Gradient cases exactly where a result is differentiated in training."""
    assert {(a, f.name) for a, f in DIFFERENTIATED} == {
        ("05_grpo_lld", "sequence_logprobs"),
        ("07_beyond_nthr", "clipped_surrogate"),
        ("07_beyond_nthr", "nll_on_correct"),
        ("07_beyond_nthr", "smaug_floor"),
    }


@pytest.mark.parametrize("assignment,fspec", DIFFERENTIATED, ids=lambda x: getattr(x, "name", x))
def test_docstring_marks_are_the_inputs_the_gradient_cases_check(assignment, fspec):
    """Each input marked "with gradient" or "detached" in the docstring is the one the
    gradient cases differentiate, and no other argument is marked."""
    lines = _arg_lines(assignment, fspec.name)
    marked_with = {n for n, t in lines.items() if "with gradient" in t}
    marked_detached = {n for n, t in lines.items() if "detached" in t}
    assert marked_with == set(fspec.with_gradient), (fspec.name, lines)
    assert marked_detached == set(fspec.detached), (fspec.name, lines)


@pytest.mark.parametrize("assignment,fspec", FUNCTIONS, ids=lambda x: getattr(x, "name", x))
def test_no_function_marks_an_input_with_gradient_without_grading_it(assignment, fspec):
    lines = _arg_lines(assignment, fspec.name)
    if not fspec.of_kind("gradient"):
        assert not [n for n, t in lines.items() if "with gradient" in t], fspec.name


def test_gradient_cases_without_marked_inputs_are_refused():
    """A gradient case must know which inputs to differentiate."""
    cases = (Case("a", (1.0,)), Case("g", (1.0,), kind="gradient"))
    split = Split(80, 0, 0, "a test", gradient=20)
    with pytest.raises(ValueError, match="with_gradient"):
        FunctionSpec("f", cases, split=split)
    assert FunctionSpec("f", cases, split=split, with_gradient=("x",)).of_kind("gradient") == [1]


# -- the codec: what the process that runs the function sends ---------------------------------

GRAD = {"with": [["x", 0]], "detached": [["y", 1]]}


def _outcome(fn, *args):
    return codec.outcome_of(fn, codec.encode(list(args)), codec.encode({}), {}, GRAD)


def test_gradient_outcome_holds_the_gradient_and_whether_a_detached_input_got_any():
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    o = _outcome(lambda x, y: (x * y.detach()).sum(), x, y)
    assert o == {
        "value": {
            "$dict": {
                "x": {"$tensor": [3.0, 4.0], "shape": [2], "dtype": "float32"},
                "y": codec.NO_GRADIENT,
            }
        }
    }
    leaky = _outcome(lambda x, y: (x * y).sum(), x, y)
    assert leaky["value"]["$dict"]["y"] == codec.GRADIENT


def test_a_detached_result_gives_a_zero_gradient_not_an_error():
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    o = _outcome(lambda x, y: (x * y).sum().detach(), x, y)
    assert o["value"]["$dict"]["x"]["$tensor"] == [0.0, 0.0]
    assert o["value"]["$dict"]["y"] == codec.NO_GRADIENT


def test_a_result_rebuilt_from_numbers_cannot_be_differentiated():
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    o = _outcome(lambda x, y: float((x * y).sum().detach()), x, y)
    assert o["raised"] == "NoGradient"


def test_grad_mode_switched_off_by_an_earlier_cell_does_not_change_the_gradient():
    """In nbgrader's kernel the reference runs in the learner's process: a learner cell that
    calls torch.set_grad_enabled(False) must not give the reference a zero gradient."""
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    with torch.no_grad():
        o = _outcome(lambda x, y: (x * y.detach()).sum(), x, y)
    assert o["value"]["$dict"]["x"]["$tensor"] == [3.0, 4.0]


def test_a_non_scalar_result_is_differentiated_through_fixed_weights():
    """Σ w·result with the same w every time: two calls agree, and the gradient is not the
    plain sum's (every output element weighs differently)."""
    x = torch.tensor([1.0, 2.0, 3.0])
    grad = {"with": [["x", 0]], "detached": []}
    args = codec.encode([x])
    a = codec.outcome_of(lambda x: x * 2, args, codec.encode({}), {}, grad)
    b = codec.outcome_of(lambda x: x * 2, args, codec.encode({}), {}, grad)
    assert a == b
    g = a["value"]["$dict"]["x"]["$tensor"]
    assert len(set(g)) == 3 and g != [2.0, 2.0, 2.0]


def test_the_function_gets_a_non_leaf_copy_so_in_place_edits_do_not_raise():
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])

    def f(x, y):
        y = y.detach()
        x.mul_(1.0)  # an in-place edit: allowed on a model's output, refused on a leaf
        return (x * y).sum()

    o = _outcome(f, x, y)
    assert o["value"]["$dict"]["x"]["$tensor"] == [3.0, 4.0]


# -- real code through both engines ------------------------------------------------------------

# (assignment, function, the reference line, the learner's line, expect full marks)
VARIANTS = {
    "logp-detached": (
        "07_beyond_nthr",
        "clipped_surrogate",
        "diff = torch.where(mask, logp - logp_old.detach(), 0.0)",
        "diff = torch.where(mask, logp.detach() - logp_old.detach(), 0.0)",
        False,
    ),
    "logp-old-not-detached": (
        "07_beyond_nthr",
        "clipped_surrogate",
        "diff = torch.where(mask, logp - logp_old.detach(), 0.0)",
        "diff = torch.where(mask, logp - logp_old, 0.0)",
        False,
    ),
    "advantages-not-detached": (
        "07_beyond_nthr",
        "clipped_surrogate",
        "adv = advantages.detach()",
        "adv = advantages",
        False,
    ),
    "kink-clamp": (
        "07_beyond_nthr",
        "smaug_floor",
        "gap = torch.relu(ref_seq_logp.detach() - seq_logp)",
        "gap = torch.clamp(ref_seq_logp.detach() - seq_logp, min=0)",
        False,
    ),
    "logits-via-numpy": (
        "05_grpo_lld",
        "sequence_logprobs",
        "return picked.sum(dim=1)",
        "return torch.tensor(picked.detach().numpy().sum(axis=1))",
        False,
    ),
    # gradient-correct variants: other ways to write the same maths, float64 inside included
    "surrogate-as-maximum-of-losses": (
        "07_beyond_nthr",
        "clipped_surrogate",
        "per_token = torch.where(mask, -torch.minimum(unclipped, clipped), 0.0)",
        "per_token = torch.where(mask, torch.maximum(-unclipped, -clipped), 0.0)",
        True,
    ),
    "surrogate-in-float64": (
        "07_beyond_nthr",
        "clipped_surrogate",
        "ratio = torch.exp(diff)",
        "ratio = torch.exp(diff.double()).float()",
        True,
    ),
    "floor-as-where": (
        "07_beyond_nthr",
        "smaug_floor",
        "gap = torch.relu(ref_seq_logp.detach() - seq_logp)",
        "d = ref_seq_logp.detach() - seq_logp; gap = torch.where(d > 0, d, torch.zeros_like(d))",
        True,
    ),
}


def _learner_notebook(assignment: str, function: str, old: str, new: str):
    import nbgrader_course

    nb = nbgrader_course.learner_notebook(assignment, "solution", None, slim=True)
    hits = 0
    for c in nb.cells:
        meta = c.get("metadata", {}).get("nbgrader", {})
        if c.get("cell_type") == "code" and meta.get("solution") and old in c.source:
            c.source = c.source.replace(old, new)
            hits += 1
    assert hits == 1, f"{function}: the line {old!r} is not in one solution cell"
    return nb


def _in_kernel(assignment: str, nb, function: str):
    ns = nbgrader_course.kernel_namespace(assignment, nb, f"gradients_{assignment}")
    return kernel.grade_function(assignment, function, ns[function], namespace=ns, student="s")


@pytest.mark.slow
def test_gradient_mistakes_lose_points_on_both_engines_and_correct_variants_keep_them(tmp_path):
    """A detached logp, an undetached logp_old or advantages, a clamp at the floor's kink and
    a sum rebuilt through numpy each lose points, the same on both engines, with a diagnosis
    naming the gradient; other correct ways (float64 inside included) keep full marks."""
    kernel_results = {}
    for vid, (a, fn, old, new, _) in VARIANTS.items():
        nb = _learner_notebook(a, fn, old, new)
        folder = tmp_path / "submitted" / vid / a
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{a}.ipynb"))
        kernel_results[vid] = _in_kernel(a, nb, fn)
    out = tmp_path / "out"
    p = run_drills("grade", str(tmp_path / "submitted"), "--out", str(out), "--jobs", "2")
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads((out / "results.json").read_text())
    sandbox = {
        s["student"]: {f["function"]: f for f in s["functions"]}
        for s in res["submissions"]
        if s["feedback"]
    }
    for vid, (_a, fn, _, _, correct) in VARIANTS.items():
        k = kernel_results[vid]
        s = sandbox[vid][fn]
        assert (s["score"], s["mistake"]) == (k.score, k.mistake), (vid, s["score"], k.score)
        if correct:
            assert k.score == k.points, (vid, [c.id for c in k.cases if not c.passed])
            continue
        assert k.score < k.points, vid
        gradient = next(x for x in k.kinds if x.kind == "gradient")
        assert gradient.score < gradient.points, vid
        assert all(x.score == x.points for x in k.kinds if x.kind != "gradient"), vid
        assert any("gradient" in d.text for d in k.diagnoses), (vid, k.diagnoses)
        assert any("gradient" in d["text"] for d in s["diagnoses"]), (vid, s["diagnoses"])
    expected_ids = {
        "logp-detached": "logp-detached",
        "logp-old-not-detached": "logp-old-not-detached",
        "advantages-not-detached": "advantages-not-detached",
        "kink-clamp": "kink-gradient",
    }
    for vid, mid in expected_ids.items():
        assert kernel_results[vid].mistake == mid, (vid, kernel_results[vid].diagnoses)


# -- the same gradient verdicts for every student ----------------------------------------------

SECRETS = 20


@pytest.mark.parametrize("assignment,fspec", DIFFERENTIATED, ids=lambda x: getattr(x, "name", x))
def test_each_mistake_fails_the_same_gradient_cases_for_every_secret(assignment, fspec):
    """A mistake's gradient points must not depend on the draw: over 20 secrets and students,
    every catalogued mistake passes or fails each gradient case the same way (the generated
    gradient cases plant the tokens each clip, floor and mean mistake acts on)."""
    from autograder.cases import seeds
    from autograder.cases.codec import encode
    from autograder.cases.compare import same_outcome
    from autograder.notebooks import reference
    from autograder.scoring import evaluate

    ns = reference.namespace(assignment, ROOT)
    idx = [i for i in fspec.of_kind("gradient") if fspec.cases[i].hidden]
    mutants = {m.id: m.build(ns) for m in fspec.mistakes if not m.validation}
    verdicts: dict[str, set] = {m: set() for m in mutants}
    for k in range(SECRETS):
        inputs = []
        for i in idx:
            case = fspec.cases[i]
            rng = seeds.case_rng(f"secret {k}", assignment, f"{fspec.name}/{case.id}", f"s{k}")
            args = tuple(case.make(rng))
            inputs.append(
                {
                    "args": encode(list(args)),
                    "kwargs": encode(dict(case.kwargs)),
                    "grad": evaluate.gradient_targets(assignment, fspec, len(args), case.kwargs),
                }
            )
        expected = evaluate.run_cases(ns[fspec.name], inputs, ns)[0]
        for mid, fn in mutants.items():
            got = evaluate.run_cases(fn, inputs, ns)[0]
            verdicts[mid].add(
                tuple(
                    same_outcome(e, g, fspec.cases[i].rtol, fspec.cases[i].atol)
                    for i, e, g in zip(idx, expected, got)
                )
            )
    varying = {m: sorted(v) for m, v in verdicts.items() if len(v) > 1}
    assert not varying, f"{fspec.name}: gradient verdicts that depend on the draw: {varying}"
