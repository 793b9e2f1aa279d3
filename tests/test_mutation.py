"""Mutation testing of the hidden cases (autograder/scoring/mutation.py).

Every mutant of every graded function's reference solution must be killed by its
cases, or listed with a reason in autograder/assignments/equivalent_mutants.json.
The whole run takes about 10 s on a quiet 2-core machine, so every function is
run in full here; benchmarks/mutation_score.py prints the table.
"""

from __future__ import annotations

import ast

import pytest
from conftest import ROOT, available_assignments

from autograder import assignments
from autograder.notebooks import reference, source
from autograder.scoring import mutation

FUNCTIONS = [(a, f.name) for a in available_assignments() for f in assignments.get(a).functions]


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_every_non_equivalent_mutant_is_killed(assignment, function):
    """Does some case tell every mutant of the reference from the reference, except the listed
    equivalent ones, and does every listed one still exist and survive?"""
    r = mutation.run(assignment, function, ROOT)
    assert r.mutants > 0
    assert not r.survived, (
        f"{len(r.survived)} mutants of {function} survive: add a case that kills each, or list "
        "it with the reason no input can tell it apart in "
        f'autograder/assignments/equivalent_mutants.json under "{assignment}/{function}" '
        f"(see them alone: python benchmarks/mutation_score.py {assignment} {function} "
        "--survivors):\n  "
        + "\n  ".join(mutation.survivor_advice(assignment, function, m, ROOT) for m in r.survived)
    )
    assert not r.broken, (
        f"mutants of {function} that do not compile (an operator's bug in "
        "autograder/scoring/mutation.py; they prove nothing about the cases):\n  "
        + "\n  ".join(r.broken)
    )
    assert not r.stale, (
        f"listed as equivalent under {assignment}/{function} in "
        "autograder/assignments/equivalent_mutants.json but killed by a case or no longer "
        "generated: delete these entries:\n  " + "\n  ".join(r.stale)
    )


GRADIENT_FUNCTIONS = [
    (a, f.name)
    for a in available_assignments()
    for f in assignments.get(a).functions
    if any(c.kind == "gradient" for c in f.cases)
]


@pytest.mark.parametrize("assignment,function", GRADIENT_FUNCTIONS)
def test_gradient_mutants_are_killed_by_the_gradient_cases_alone(assignment, function):
    """A detach removed or added, a straight-through clip, another convention at a kink: each
    leaves every value as the reference's, so no value, edge or invalid case may kill it, and
    some gradient case must. Were the gradient cases dropped, these mutants would survive."""
    found = mutation.gradient_kills(assignment, function, ROOT)
    assert found, f"no gradient mutant of {function}, which has gradient cases"
    wrong = {m: sorted(kinds) or "survives" for m, kinds in found.items() if kinds != {"gradient"}}
    assert not wrong, (
        f"gradient mutants of {function} that the gradient cases alone do not kill "
        f"(the kinds of case that fail on each): {wrong}"
    )


def test_gradient_operators_cover_the_field_s_gradient_bugs():
    """The gradient operator writes each bug the field makes with a loss's gradient, somewhere in
    the course: a detach dropped (logp_old, the advantages, the reference), the new log
    probabilities detached, a straight-through clip, and the kink of a floor as clamp and
    maximum write it."""
    ids = [
        m.id
        for a, f in GRADIENT_FUNCTIONS
        for m in mutation.mutants(a, f, ROOT)
        if ": gradient: " in m.id
    ]
    wanted = {
        "a detach dropped": "logp_old.detach() -> logp_old",
        "an input with gradient detached": "logp -> logp.detach()",
        "a straight-through clip": "- ratio).detach()",
        "clamp at the kink": "-> torch.clamp(ref_seq_logp.detach() - seq_logp, min=0.0)",
        "maximum at the kink": "-> torch.maximum(ref_seq_logp.detach() - seq_logp",
    }
    missing = [what for what, text in wanted.items() if not any(text in i for i in ids)]
    assert not missing, f"no gradient mutant writes {missing}; the ids: {ids}"


def test_every_equivalent_mutant_has_a_reason():
    listed = mutation.equivalent_mutants()
    assert listed, "the reviewed file is empty or missing"
    for key, entries in listed.items():
        assert key in {f"{a}/{f}" for a, f in FUNCTIONS}, key
        for mid, reason in entries.items():
            assert isinstance(reason, str) and len(reason) > 20, (key, mid)


def test_mutant_ids_are_unique_and_name_the_def_and_the_operator():
    for a, f in FUNCTIONS:
        ids = [m.id for m in mutation.mutants(a, f, ROOT)]
        assert len(ids) == len(set(ids)), f
        for mid in ids:
            name, op, _ = mid.split(": ", 2)
            assert name == f or name.startswith("_"), mid
            assert op.split(" ")[0] in {
                "binop",
                "drop-term",
                "compare",
                "boolop",
                "constant",
                "swap-args",
                "reduction",
                "drop-keyword",
                "unclip",
                "raise",
                "if",
                "loop",
                "gradient",
            }, mid


def test_every_operator_family_is_exercised():
    """Does the transformer produce each operator the issue asks for, somewhere in the course?"""
    ops = {
        m.id.split(": ")[1].split(" ")[0]
        for a, f in FUNCTIONS
        for m in mutation.mutants(a, f, ROOT)
    }
    assert {"binop", "compare", "constant", "swap-args", "drop-term", "reduction"} <= ops
    assert {"drop-keyword", "unclip", "raise", "if", "loop", "boolop", "gradient"} <= ops


def test_mutant_ids_do_not_depend_on_line_numbers():
    """A def moved down the notebook (other cells added above it) keeps its mutant ids."""
    a, f = "05_grpo_lld", "lld_rate"
    before = [m.id for m in mutation.mutants(a, f, ROOT)]
    defs = mutation.notebook.solution_defs(a, ROOT)
    moved = {
        k: ast.increment_lineno(ast.parse(ast.unparse(v)).body[0], 40) for k, v in defs.items()
    }
    key = str(mutation.notebook.source_path(a, ROOT))
    saved = mutation.notebook._DEFS[key]
    try:
        mutation.notebook._DEFS[key] = moved
        after = [m.id for m in mutation.mutants(a, f, ROOT)]
    finally:
        mutation.notebook._DEFS[key] = saved
    assert after == before


def test_a_mutant_that_never_returns_is_killed_by_the_time_limit():
    """A mutated loop that spins forever: is it stopped by the alarm and counted as killed?"""
    fspec = assignments.get("05_grpo_lld").function("lld_rate")
    ns = reference.namespace("05_grpo_lld", ROOT)
    case_sets = mutation._case_sets("05_grpo_lld", fspec, ROOT)

    def spins(changes, eps=0.0):
        while True:
            pass

    assert mutation.killed(spins, ns, fspec, case_sets, limit=0.2)


def test_the_reference_itself_is_not_killed():
    fspec = assignments.get("03_sum_vs_mean").function("masked_mean")
    ns = reference.namespace("03_sum_vs_mean", ROOT)
    case_sets = mutation._case_sets("03_sum_vs_mean", fspec, ROOT)
    assert not mutation.killed(ns["masked_mean"], ns, fspec, case_sets)


def test_a_survivor_in_a_shared_helper_names_the_functions_that_share_it():
    """A mutant of a private helper called by several graded functions: does the advice say the
    helper is shared, by whom, and which function's case must kill it?"""
    shared = next(
        (a, h, users)
        for a in available_assignments()
        for h in {
            d.name
            for f in assignments.get(a).functions
            for d in mutation.targets(a, f.name, ROOT)
            if d.name.startswith("_")
        }
        if len(users := mutation.helper_users(a, h, ROOT)) > 1
    )
    a, helper, users = shared
    text = mutation.survivor_advice(
        a, users[0], f"{helper}: raise: raise ValueError() -> pass", ROOT
    )
    assert f"survivor in {helper}, a helper shared by {', '.join(users)}" in text
    assert f"a case of {users[0]} must kill it" in text
    own = mutation.survivor_advice(a, users[0], f"{users[0]}: binop: a + b -> a - b", ROOT)
    assert f"add a case of {users[0]}" in own and "shared" not in own


def test_without_checks_removes_only_the_checks_it_is_asked_to():
    """shaped_reward without its beta check still rejects a NaN base reward, and accepts beta < 0."""
    fn, _ = source.without_checks("03_sum_vs_mean", "shaped_reward", ("beta",), ROOT)
    assert fn(1.0, [-1.0], [-2.0], -0.5) == pytest.approx(1.5)
    with pytest.raises(ValueError, match="base_reward"):
        fn(float("nan"), [-1.0], [-2.0], 0.5)


def test_without_checks_says_when_no_check_matches():
    with pytest.raises(ValueError, match="no input check matches"):
        source.without_checks("03_sum_vs_mean", "shaped_reward", ("no such words",), ROOT)


def test_an_equivalent_entry_survives_a_reworded_message_but_not_changed_code():
    """An entry keyed by a raise whose message was reworded (or re-quoted) still matches;
    one whose condition changed does not: it is another mutant."""
    key = mutation.mutant_key
    listed = "f: raise: raise ValueError(f'eps must be finite, got {eps!r}') -> pass"
    assert key(listed) == key('f: raise: raise ValueError("eps must be a finite float") -> pass')
    assert key("f: compare: r > 0 -> r >= 0") != key("f: compare: r > 1 -> r >= 1")
    assert key("f: compare: x == 'a' -> x != 'a'") == key('f: compare: x == "b" -> x != "b"')
    reworded = "f: raise: raise ValueError(f'eps must be finite') -> pass"
    assert mutation.match_listed([reworded], [listed]) == {reworded: listed}
    # two raises that differ only in their message: the entry matches neither by its key
    two = [reworded, "f: raise: raise ValueError('beta must be finite') -> pass"]
    assert mutation.match_listed(two, [listed]) == {}
    assert mutation.match_listed(two, [two[1]]) == {two[1]: two[1]}
