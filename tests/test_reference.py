"""Can a reference solution be quietly wrong? Evidence about it that it did not produce itself.

Expected values are the reference's outputs, so a wrong reference grades itself full marks in
the contract tests (tests/test_cases.py then blames the cases or the mistakes). The anchors
(tests/test_anchors.py) check it on the inputs they name; these tests check it elsewhere:

- the worked examples of its docstring (``>>>`` lines, written by hand), run as doctests;
- the defaults its description states (the "Write `f(x, beta=0.05)`" line of its section)
  against the ones its ``def`` has: a changed default changes every case that omits it;
- the properties its description states (autograder/assignments/properties.py: invariances,
  limits, identities, relations between modes, a second implementation), on the inputs of every
  value and edge case, generated ones with the public default secret.

Every failure says "the reference may be wrong": nothing but the reference is under test.
"""

from __future__ import annotations

import ast
import doctest
import inspect
import re

import pytest
from conftest import ROOT, available_assignments

from autograder import assignments
from autograder.assignments.properties import PROPERTIES
from autograder.cases import seeds
from autograder.cases.codec import decode, encode
from autograder.notebooks import notebook, reference

FUNCTIONS = [(a, f.name) for a in available_assignments() for f in assignments.get(a).functions]

# Docstrings whose example is not a doctest, and why (their worked example is checked by the
# notebook's self-check cell and the anchors instead).
NOT_DOCTESTS = {
    ("04_rlef_turn_rewards", "extract_code"): "its example is a response holding a code fence",
    ("04_rlef_turn_rewards", "task_reward"): "its example is a response holding a code fence",
    ("04_rlef_turn_rewards", "turn_rewards"): "its example's turns hold responses with code fences",
}


def wrong(assignment: str, function: str, what: str) -> str:
    return (
        f"the reference may be wrong: {assignment} `{function}` (the solution cell of "
        f"solutions/{assignment}/{assignment}.ipynb) {what}"
    )


def case_inputs(assignment: str, function: str, ns: dict):
    """(case id, args, kwargs) of every value and edge case, decoded as the reference gets them;
    generated inputs drawn with the public default secret."""
    fspec = assignments.get(assignment).function(function)
    for case in fspec.cases:
        if case.kind == "invalid":
            continue
        if case.make is not None:
            rng = seeds.case_rng(
                seeds.PUBLIC_DEFAULT_SECRET, assignment, f"{function}/{case.id}", None
            )
            args = tuple(case.make(rng))
        else:
            args = tuple(case.args)
        yield case.id, tuple(decode(encode(list(args)), ns)), decode(encode(dict(case.kwargs)), ns)


@pytest.fixture(scope="module")
def namespaces():
    return {}


def _ns(namespaces, assignment):
    if assignment not in namespaces:
        namespaces[assignment] = reference.namespace(assignment, ROOT)
    return namespaces[assignment]


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_reference_reproduces_its_docstring_examples(namespaces, assignment, function):
    """Does the reference give the values its docstring's worked example states?"""
    if (assignment, function) in NOT_DOCTESTS:
        pytest.skip(f"{function}: {NOT_DOCTESTS[(assignment, function)]}")
    ns = _ns(namespaces, assignment)
    fn = ns[function]
    tests = doctest.DocTestFinder(recurse=False).find(fn, function, globs=dict(ns))
    examples = sum(len(t.examples) for t in tests)
    assert examples, (
        f"{assignment} `{function}`: its docstring has no `>>>` example to check the reference "
        "against; add the worked example as one (or list it in NOT_DOCTESTS with why)"
    )
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t, out=report.append)
    assert runner.failures == 0, wrong(
        assignment, function, "does not give its docstring's example:\n" + "".join(report)[-2000:]
    )


def stated_signature(assignment: str, function: str) -> str | None:
    """The parameter list of the "Write `f(...)`" line of the function's section, or None."""
    nb = notebook.read(notebook.source_path(assignment, ROOT))
    for c in nb.cells:
        if c.cell_type != "markdown":
            continue
        m = re.search(rf"[Ww]rite\s+`{function}\(([^`]*)\)`", c.source)
        if m:
            return m[1]
    return None


def stated_defaults(params: str) -> dict[str, object]:
    fn = ast.parse(f"def _({params}): pass").body[0].args
    defaults = fn.defaults
    names = [a.arg for a in fn.args][len(fn.args) - len(defaults) :]
    return {n: ast.literal_eval(d) for n, d in zip(names, defaults)}


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_reference_defaults_are_the_ones_its_section_states(namespaces, assignment, function):
    """Does every default of the reference's `def` equal the one the section's "Write `f(...)`"
    line states? A changed default changes every case that leaves the argument out."""
    ns = _ns(namespaces, assignment)
    have = {
        k: p.default
        for k, p in inspect.signature(ns[function]).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    text = stated_signature(assignment, function)
    if text is None:
        assert not have, (
            f"{assignment} `{function}` has defaults {have} but its section has no "
            f'"Write `{function}(...)`" line stating them'
        )
        return
    said = stated_defaults(text)
    differ = {k: (said.get(k, "not stated"), v) for k, v in have.items() if said.get(k) != v}
    differ |= {k: (s, "none") for k, s in said.items() if k not in have}
    assert not differ, wrong(
        assignment,
        function,
        "has defaults other than its section states ("
        + ", ".join(f"{k}: section {s!r}, def {v!r}" for k, (s, v) in differ.items())
        + ")",
    )


PROPERTY_PARAMS = [
    (a, f, what) for (a, f), props in PROPERTIES.items() for what, _ in props if (a, f) in FUNCTIONS
]


@pytest.mark.parametrize("assignment,function,what", PROPERTY_PARAMS)
def test_reference_keeps_the_properties_its_description_states(
    namespaces, assignment, function, what
):
    """Does the reference keep a stated property on every value and edge case's inputs?"""
    ns = _ns(namespaces, assignment)
    check = dict(PROPERTIES[(assignment, function)])[what]
    broken = []
    for case_id, args, kwargs in case_inputs(assignment, function, ns):
        try:
            seen = check(ns[function], args, kwargs)
        except Exception as e:  # noqa: BLE001 - a raising reference is a finding here
            seen = f"raised {type(e).__name__}: {e}"
        if seen:
            broken.append(f"case {case_id}: {seen}")
    assert not broken, wrong(
        assignment, function, f"breaks “{what}” on {len(broken)} cases: " + "; ".join(broken[:5])
    )


def test_every_property_names_a_graded_function():
    """Is every entry of PROPERTIES a graded function (not one renamed away)?"""
    every = {(a, f.name) for a in notebook.ASSIGNMENTS for f in assignments.get(a).functions}
    assert set(PROPERTIES) <= every, set(PROPERTIES) - every


@pytest.mark.parametrize("assignment,function", sorted({(a, f) for a, f, _ in PROPERTY_PARAMS}))
def test_a_negated_reference_breaks_a_stated_property(namespaces, assignment, function):
    """The sign plant: is the reference with its result negated caught by some property on
    some case (none of them holds only vacuously)?"""
    import numpy as np

    ns = _ns(namespaces, assignment)
    right = ns[function]

    def negated(*args, **kwargs):
        v = right(*args, **kwargs)
        return -np.asarray(v) if not hasattr(v, "detach") else -v

    caught = [
        what
        for what, check in PROPERTIES[(assignment, function)]
        for _, args, kwargs in case_inputs(assignment, function, ns)
        if check(negated, args, kwargs)
    ]
    assert caught, f"no property of {function} sees its result negated"
