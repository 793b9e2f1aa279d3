"""Independent anchors for every reference solution, and the numbers shown to learners.

Expected values come from the reference solution itself, so a wrong reference grades
itself full marks. Each graded function therefore carries at least two anchors: fixed
cases with a hand-computed ``expected=`` (from CURRICULUM.md, the paper or the
notebook's worked example, with where it comes from in ``anchor=``), which the reference
must reproduce within the function's stated tolerance. Every number with two or more
decimals in a case note or a mistake's diagnosis must be one the code produces.
The last two tests plant a wrong reference and a wrong note number and show both caught.
"""

from __future__ import annotations

import dataclasses

import pytest
from conftest import ROOT, available_assignments

from autograder import assignments
from autograder.notebooks import reference
from autograder.scoring import anchors

FUNCTIONS = [(a, f.name) for a in available_assignments() for f in assignments.get(a).functions]


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_every_function_has_two_independent_anchors(assignment, function):
    """Has every graded function at least two anchored cases, each saying where its value
    comes from?"""
    fspec = assignments.get(assignment).function(function)
    found = anchors.anchors(fspec)
    assert len(found) >= anchors.MIN_ANCHORS, (
        f"{function} has {len(found)} anchors: give at least {anchors.MIN_ANCHORS} fixed cases "
        "an expected= computed by hand (fractions, math) or taken from the paper or the "
        "notebook's worked example, with anchor= saying where it comes from"
    )


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_reference_reproduces_its_anchors(assignment, function):
    """A wrong reference (e.g. a lower clip bound of 1 − eps_high) would pass every other test,
    since expected values are its own output: does it reproduce the hand-computed anchors?"""
    fspec = assignments.get(assignment).function(function)
    problems = anchors.anchor_problems(fspec, reference.namespace(assignment, ROOT))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_numbers_shown_to_learners_are_produced_by_the_code(assignment, function):
    """Is every number quoted in a case note or a diagnosis an input, the reference's output or
    (for a diagnosis) the mistake's output on a fixed case?"""
    spec = assignments.get(assignment)
    ns = reference.namespace(assignment, ROOT)
    others = [
        v for f in spec.functions if f.name != function for v in anchors.reference_numbers(f, ns)
    ]
    problems = anchors.number_problems(spec.function(function), ns, others)
    assert not problems, "\n".join(problems)


def test_a_planted_wrong_reference_is_caught_by_the_anchors():
    """forward_kl with log base 2 in place of the reference: every expected value moves with it,
    so only the anchors can see it."""
    import math

    fspec = assignments.get("01_exact_kl").function("forward_kl")
    ns = dict(reference.namespace("01_exact_kl", ROOT))
    right = ns["forward_kl"]

    def wrong(policy, reference_):
        right(policy, reference_)  # same checks
        return sum(p * math.log2(p / q) if q else math.inf for p, q in zip(policy, reference_) if p)

    ns["forward_kl"] = wrong
    problems = anchors.anchor_problems(fspec, ns)
    assert len(problems) >= anchors.MIN_ANCHORS, problems
    assert all("the reference solution in solutions/ is wrong" in p for p in problems)
    assert not anchors.anchor_problems(fspec, reference.namespace("01_exact_kl", ROOT))


def test_a_planted_wrong_note_number_is_caught():
    """The story's exact forward KL misquoted in its note (0.386064 for 0.368064): caught, and
    the right number passes."""
    fspec = assignments.get("01_exact_kl").function("forward_kl")
    ns = reference.namespace("01_exact_kl", ROOT)
    story = next(c for c in fspec.cases if c.id == "story")
    assert "0.368064" in story.note
    bad = dataclasses.replace(story, note=story.note.replace("0.368064", "0.386064"))
    planted = dataclasses.replace(
        fspec, cases=tuple(bad if c.id == "story" else c for c in fspec.cases)
    )
    problems = anchors.number_problems(planted, ns)
    assert problems and "0.386064" in problems[0], problems
    assert not anchors.number_problems(fspec, ns)


def test_a_planted_wrong_diagnosis_number_is_caught():
    """The clamped mistake's quoted value (0.529008) misquoted as 0.592008: caught."""
    fspec = assignments.get("01_exact_kl").function("forward_kl")
    ns = reference.namespace("01_exact_kl", ROOT)
    m = next(x for x in fspec.mistakes if x.id == "clamped")
    bad = dataclasses.replace(m, diagnosis=m.diagnosis.replace("0.529008", "0.592008"))
    planted = dataclasses.replace(
        fspec, mistakes=tuple(bad if x.id == "clamped" else x for x in fspec.mistakes)
    )
    problems = anchors.number_problems(planted, ns)
    assert problems and "0.592008" in problems[0], problems


def test_shown_numbers_reads_signs_and_decimals():
    got = anchors.shown_numbers("mean 0.368064, k1 = −1.609438; 2.5e-9 and 47.9 are not read")
    assert got == [("0.368064", 0.368064, 6), ("−1.609438", -1.609438, 6)]


def test_drills_cases_shows_each_anchor_with_where_it_comes_from(capsys):
    from autograder import cli

    assert cli.main(["cases", "01_exact_kl"]) == 0
    out = capsys.readouterr().out
    assert "anchor: 0.368064  (CURRICULUM 01: exact forward KL 0.368064)" in out
    n = sum(len(anchors.anchors(f)) for f in assignments.get("01_exact_kl").functions)
    assert out.count("anchor: ") == n


def test_a_default_argument_quoted_in_a_note_is_accepted_and_a_wrong_one_is_not():
    """A note saying "beta = 0.05, the default" (a value the case leaves out, so the reference
    uses its default): accepted; the same note with 0.07 is still refused."""
    import dataclasses

    spec = assignments.get("04_rlef_turn_rewards").function("turn_rewards")
    ns = reference.namespace("04_rlef_turn_rewards", ROOT)
    fixed = next(i for i, c in enumerate(spec.cases) if not c.hidden and c.kind == "value")

    def with_note(note):
        cases = list(spec.cases)
        cases[fixed] = dataclasses.replace(cases[fixed], note=note)
        return dataclasses.replace(spec, cases=tuple(cases))

    assert not anchors.number_problems(with_note("beta = 0.05, the default"), ns)
    problems = anchors.number_problems(with_note("beta = 0.07, not the default"), ns)
    assert any("0.07" in p for p in problems), problems
