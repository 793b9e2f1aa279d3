"""Can learner code rewrite the gradient checks that decide its points?

The gradient cases of 05-07 differentiate the learner's result in the learner's own process
(the sandboxed child). Held attack: a `clipped_surrogate` that lets gradient into `advantages`
(the docstring says they are detached: 2.4 of 3) patched `torch.Tensor.backward` so that after
the real backward it cleared the `.grad` of the leaf behind `advantages`, and scored 9.0/9
instead of 8.4/9, warm and cold. Each attack below is that wrong function plus one way to hide
the gradient; each must score no more than the wrong function alone (its control), in a cold
child and in a warm job, and the honest solution keeps full marks.

What an in-process check still cannot stop is said in docs/security.md: code that writes
process memory (ctypes), or that finds and rewrites the grader's own Python objects in the
child (its codec module's functions, Python's builtins).
"""

from __future__ import annotations

import json

import nbformat
import pytest
from conftest import run_drills

A, FN = "07_beyond_nthr", "clipped_surrogate"
WRONG = ("adv = advantages.detach()", "adv = advantages")

# module-level code put after the learner's definitions in the clipped_surrogate cell
_FIND_LEAF = """
def _leaf_of(x):
    node = x.grad_fn
    while node is not None and type(node).__name__ != "AccumulateGrad":
        node = node.next_functions[0][0] if node.next_functions else None
    return None if node is None else node.variable
_SEEN = []
_honest = clipped_surrogate
def clipped_surrogate(logp, logp_old, advantages, *a, **k):
    _SEEN.append(advantages)
    return _honest(logp, logp_old, advantages, *a, **k)
"""

ATTACKS = {
    "patched-backward": _FIND_LEAF
    + """
_real_backward = torch.Tensor.backward
def _backward(self, *a, **k):
    _real_backward(self, *a, **k)
    for x in _SEEN:
        leaf = _leaf_of(x)
        if leaf is not None:
            leaf.grad = None
torch.Tensor.backward = _backward
""",
    "patched-autograd-grad": _FIND_LEAF
    + """
_real_grad = torch.autograd.grad
def _grad(outputs, inputs, *a, **k):
    k["allow_unused"] = True
    got = _real_grad(outputs, inputs, *a, **k)
    hidden = {id(_leaf_of(x)) for x in _SEEN}
    return tuple(None if id(i) in hidden else g for i, g in zip(inputs, got))
torch.autograd.grad = _grad
""",
    "grad-property-replaced": _FIND_LEAF
    + """
_real_grad_prop = torch.Tensor.grad
def _get(self):
    if any(self is _leaf_of(x) for x in _SEEN):
        return None
    return _real_grad_prop.__get__(self)
torch.Tensor.grad = property(_get, _real_grad_prop.__set__)
""",
    "hook-on-input": """
_honest = clipped_surrogate
def clipped_surrogate(logp, logp_old, advantages, *a, **k):
    if advantages.requires_grad:
        advantages.register_hook(lambda g: g * 0)
    return _honest(logp, logp_old, advantages, *a, **k)
""",
    "hook-on-intermediate": """
_honest = clipped_surrogate
def clipped_surrogate(logp, logp_old, advantages, *a, **k):
    through = advantages * 1.0
    if through.requires_grad:
        through.register_hook(lambda g: g * 0)
    return _honest(logp, logp_old, through, *a, **k)
""",
    "custom-function-zero-backward": """
class _Quiet(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        return g * 0
_honest = clipped_surrogate
def clipped_surrogate(logp, logp_old, advantages, *a, **k):
    return _honest(logp, logp_old, _Quiet.apply(advantages), *a, **k)
""",
    "backward-code-swapped": _FIND_LEAF
    + """
def _clearing(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    import sys
    import torch
    torch.autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)
    learner = sys.modules.get("drills_submission")
    for x in getattr(learner, "_SEEN", []):
        leaf = learner._leaf_of(x)
        if leaf is not None:
            leaf.grad = None
torch.Tensor.backward.__code__ = _clearing.__code__
""",
}


def _notebook(extra: str | None, wrong: bool = True):
    import nbgrader_course

    nb = nbgrader_course.learner_notebook(A, "solution", None, slim=True)
    hits = 0
    for c in nb.cells:
        meta = c.get("metadata", {}).get("nbgrader", {})
        if c.get("cell_type") == "code" and meta.get("solution") and f"def {FN}(" in c.source:
            if wrong:
                assert WRONG[0] in c.source
                c.source = c.source.replace(*WRONG)
            if extra:
                c.source += "\n" + extra
            hits += 1
    assert hits == 1
    return nb


@pytest.fixture(scope="module")
def submitted(tmp_path_factory):
    root = tmp_path_factory.mktemp("tamper") / "submitted"
    plan = {"honest": _notebook(None, wrong=False), "control": _notebook(None)}
    plan |= {name: _notebook(code) for name, code in ATTACKS.items()}
    for student, nb in plan.items():
        (root / student / A).mkdir(parents=True)
        nbformat.write(nb, str(root / student / A / f"{A}.ipynb"))
    return root


MODES = {
    "bubblewrap-warm": {"DRILLS_WARM": "on"},
    "bubblewrap-cold": {"DRILLS_WARM": "off"},
    "reduced-cold": {"DRILLS_WARM": "off", "DRILLS_SANDBOX": "none"},
    # where a container's seccomp rule keeps bubblewrap from starting (tests/namespace_less.py):
    # the grader finds that out itself and falls back
    "namespace-less-cold": {"DRILLS_WARM": "off"},
    "namespace-less-warm": {"DRILLS_WARM": "on"},
    # the same in a real runtime (tests/podman_runtime.py: podman, runc, a moby-like
    # RuntimeDefault); DRILLS_PODMAN_ALL=1 or DRILLS_SWEEP=1: the two above emulate it in
    # `make test`
    "podman-runtime-default": {"DRILLS_WARM": "on"},
}


def _prefix(mode: str) -> list[str]:
    if mode.startswith("podman"):
        import podman_runtime
        from conftest import sweep

        if not sweep("DRILLS_PODMAN_ALL"):
            pytest.skip("in a real runtime with DRILLS_PODMAN_ALL=1 (make sweep)")
        return podman_runtime.command_or_skip([], podman_runtime.runtime_default_profile())
    if not mode.startswith("namespace-less"):
        return []
    import namespace_less

    return namespace_less.command_or_skip([])


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_no_attack_on_the_gradient_check_scores_more_than_its_wrong_function(
    submitted, tmp_path, mode
):
    """Each attack is the wrong surrogate plus one way to hide its gradient from the check:
    none may score above the wrong surrogate alone (bubblewrap where installed, warm and cold,
    the reduced mode, and where a container's rule stops bubblewrap, warm and cold)."""
    out = tmp_path / "out"
    p = run_drills(
        "grade", str(submitted), "--out", str(out), "--jobs", "2", prefix=_prefix(mode),
        **MODES[mode],
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    if mode.startswith("namespace-less"):  # or this would test bubblewrap again
        assert "failed to start a sandbox" in p.stderr, p.stderr[-3000:]
    res = json.loads((out / "results.json").read_text())
    score = {
        s["student"]: next(f["score"] for f in s["functions"] if f["function"] == FN)
        for s in res["submissions"]
    }
    assert score["honest"] == 3.0, f"the honest surrogate lost points: {score['honest']}"
    assert score["control"] < 3.0, "the wrong surrogate (advantages not detached) kept full marks"
    forged = {a: score[a] for a in ATTACKS if score[a] > score["control"]}
    assert not forged, (
        f"these attacks on the gradient check scored above the wrong function alone "
        f"({score['control']}) in mode {mode}: {forged}"
    )
