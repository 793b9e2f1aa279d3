"""Feedback never contradicts itself.

A failed check is never shown beside an expected and a computed value that print the same
("expected [2.5, 5.5], got [2.5, 5.5] ✗"), and no error shape reads "every value is 1× the
expected one". Checked over the catalogue of known mistakes of every function, over a near
miss of every function (the reference's values moved by 3 × its stated tolerance), and over
the misbehaving-submission corpus through `drills check`.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import ROOT, available_assignments

from autograder import assignments
from autograder.cases.compare import render_pair
from autograder.notebooks import reference
from autograder.scoring import evaluate, kernel

ASSIGNMENTS = available_assignments()
FUNCTIONS = [(a, f.name) for a in ASSIGNMENTS for f in assignments.get(a).functions]
MISTAKES = [
    (a, f.name, m.id) for a in ASSIGNMENTS for f in assignments.get(a).functions for m in f.mistakes
]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
# Fixtures that return values (not crashes, loops or attacks): where a contradiction could show.
CORPUS_WITH_VALUES = [
    "solution",
    "wrong_shapes",
    "numpy_torch_scalars",
    "nan_and_inf",
    "lying_objects",
    "renamed_function",
    "random_state_dependent",
    "duplicated_cell",
]


def contradictions(feedback: str) -> list[str]:
    """Pairs of "expected:" / "got:" lines of a failed check that print the same, and any
    "1×" factor."""
    bad = []
    lines = feedback.splitlines()
    for k, line in enumerate(lines):
        m = re.match(r"\s*expected:\s*(.*)$", line)
        if m and k + 1 < len(lines):
            g = re.match(r"\s*got:\s*(.*)$", lines[k + 1])
            if g and g.group(1).strip() == m.group(1).strip():
                bad.append(f"{line.strip()} | {lines[k + 1].strip()}")
    bad += [line for line in lines if re.search(r"\b1× the expected", line)]
    return bad


def _grade(a, name, fn, ns=None):
    ns = ns if ns is not None else reference.namespace(a, ROOT)
    return kernel.grade_function(a, name, fn, namespace=ns, root=ROOT)


@pytest.mark.parametrize("assignment,function,mistake", MISTAKES)
def test_mistake_feedback_never_shows_equal_values_for_a_failed_check(
    assignment, function, mistake
):
    """Does every failed check of every catalogued mistake show values that print apart?"""
    ns = reference.namespace(assignment, ROOT)
    m = next(x for x in assignments.get(assignment).function(function).mistakes if x.id == mistake)
    r = _grade(assignment, function, m.build(ns), ns)
    text = evaluate.feedback_text(r, show_hidden=True, max_cases=100)
    assert not contradictions(text), contradictions(text)


def _scaled(fn, factor):
    """``fn`` with every float of its result multiplied by ``factor`` (a near miss)."""
    import numpy as np
    import torch

    def scale(x):
        if isinstance(x, bool) or isinstance(x, int):
            return x
        if isinstance(x, float):
            return x * factor
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            return x * factor
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            return x * factor
        if isinstance(x, list):
            return [scale(v) for v in x]
        if isinstance(x, tuple) and not hasattr(x, "_fields"):
            return tuple(scale(v) for v in x)
        return x

    def near(*args, **kwargs):
        return scale(fn(*args, **kwargs))

    return near


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_near_miss_shows_the_difference_and_no_factor_of_one(assignment, function):
    """The reference's values times (1 + 3 × rtol + 1e-4) fail some check: each failed check
    shows two different numbers and the size of the difference, and no diagnosis calls it a
    factor of 1."""
    fspec = assignments.get(assignment).function(function)
    ns = reference.namespace(assignment, ROOT)
    r = _grade(assignment, function, _scaled(ns[function], 1 + 3 * fspec.rtol + 1e-4), ns)
    text = evaluate.feedback_text(r, show_hidden=True, max_cases=100)
    assert not contradictions(text), contradictions(text)
    failed = [c for c in r.cases if not c.passed]
    if not failed:
        pytest.skip(f"{function}: no float output to scale")  # e.g. extract_code returns text
    assert any("largest difference" in line for line in text.splitlines()), text


def test_render_pair_adds_digits_until_the_values_differ():
    """The issue's examples: 2.5 against 2.5000001 and −1.60944 against −1.6094375."""
    e, g, note = render_pair(
        {"value": {"$array": [2.5, 5.5], "shape": [2]}},
        {"value": {"$array": [2.5000001, 5.5], "shape": [2]}},
    )
    assert e != g and "2.5000001" in g and "largest difference 1e-07" in note
    e, g, _ = render_pair({"value": -1.6094379124341003}, {"value": -1.6094375})
    assert e != g


def test_render_pair_shows_a_long_array_from_its_first_difference():
    """A difference at index 12 of 20 is shown, not hidden behind "…"."""
    e = [float(k) for k in range(20)]
    g = list(e)
    g[12] = 12.5
    te, tg, note = render_pair(
        {"value": {"$array": e, "shape": [20]}}, {"value": {"$array": g, "shape": [20]}}
    )
    assert "12.5" in tg and "12" in te and te != tg and "index 12" in note


@pytest.mark.parametrize("fixture", CORPUS_WITH_VALUES)
def test_corpus_feedback_never_shows_equal_values_for_a_failed_check(fixture):
    """`drills check --show-hidden` on the corpus fixtures that return values: no equal
    values beside a ✗, and each function's costs sum to what it lost."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder.cli",
            "check",
            "--show-hidden",
            str(CORPUS / f"{fixture}.ipynb"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert "points" in proc.stdout, proc.stdout + proc.stderr
    assert not contradictions(proc.stdout), contradictions(proc.stdout)
    from test_feedback_adds_up import costs_that_do_not_add_up

    assert not costs_that_do_not_add_up(proc.stdout), costs_that_do_not_add_up(proc.stdout)


def _shape_of(factor):
    from autograder.cases.codec import encode
    from autograder.scoring import shapes

    rows = []
    for x in ([0.5, 1.5, 2.0], [3.0, -1.0, 0.25], [7.0, 2.0, -4.0]):
        inp = {"args": encode([x]), "kwargs": encode({})}
        e = {"value": encode([v * 2 for v in x])}
        g = {"value": encode([v * 2 * factor for v in x])}
        rows.append((inp, e, g, 1e-5, 1e-6))
    return shapes.find_shape(rows, ["x"])


def test_a_factor_near_one_is_no_factor_but_a_real_factor_is_named():
    """ "every value is 1× the expected one" must never be said: a factor within 0.1 % of 1 is
    a near miss; a factor of 1.5 is still named."""
    near = _shape_of(1.00005)
    assert near is None, near.text
    far = _shape_of(1.5)
    assert far is not None and "1.5×" in far.text
