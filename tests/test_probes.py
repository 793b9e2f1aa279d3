"""Probes: inputs changed in one way the text states, and the relation the result then obeys.

The relation a probe names must be the text's, not an accident of the cases: the reference
obeys it on every case the probe changes, under the public draw and a course secret. A probe
never moves a score, runs only when a check failed, never modifies a case's own inputs, and
names a broken relation only where the learner's two results break it.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from conftest import ROOT, available_assignments
from nbgrader_course import JS_CELL, learner_notebook, symmetric_kl_notebook

from autograder import assignments
from autograder.assignments import probes as catalogue
from autograder.cases import seeds
from autograder.cases.codec import encode
from autograder.notebooks import reference
from autograder.scoring import evaluate, kernel, relations

ASSIGNMENTS = available_assignments()
PROBED = [
    (a, f.name)
    for a in ASSIGNMENTS
    for f in assignments.get(a).functions
    if catalogue.probes_of(a, f.name)
]
SECRETS = [seeds.PUBLIC_DEFAULT_SECRET, "a course secret for the probes test"]


def _probes_with_reference(a: str, name: str, secret: str) -> tuple[list[dict], list[dict]]:
    fspec = assignments.get(a).function(name)
    inputs = evaluate.materialize(a, fspec, secret)
    expected = evaluate.reference_run(a, name, inputs, ROOT)
    changed = relations.probe_inputs(a, fspec, secret, None, inputs)
    want = evaluate.reference_run(a, name, changed, ROOT)
    return expected, [dict(p, expected=e) for p, e in zip(changed, want)]


@pytest.mark.parametrize("assignment,function", PROBED)
@pytest.mark.parametrize("secret", SECRETS, ids=["public", "course"])
def test_the_reference_obeys_every_probe_relation(assignment, function, secret):
    """Is each probe's relation one the reference obeys on every case it changes, within the
    margin a relation is called broken by, and within the stated tolerance on some (a
    "differs" probe: differs on some), so that a line naming it never calls the text's own
    behaviour broken?"""
    fspec = assignments.get(assignment).function(function)
    expected, probes = _probes_with_reference(assignment, function, secret)
    by_probe: dict[str, list[bool]] = {}
    for p in probes:
        meta, i = p["probe"], p["probe"]["base"]
        if meta["relation"] in (relations.DEFAULT, "identify"):
            continue  # an argument left to its default, a slip's change: no relation to hold
        case, factors = fspec.cases[i], meta.get("factors")
        rel, base, changed = meta["relation"], expected[i], p["expected"]
        ok = relations.outcomes_obey(rel, base, changed, case.rtol, case.atol, factors)
        assert ok is not None, (p["id"], base, changed)  # the reference's outcomes are readable
        by_probe.setdefault(meta["id"], []).append(ok)
        if rel != "differs":
            # within the margin a relation is called broken by, always (float32 rounding of a
            # shifted input may move it by more than the stated tolerance, never by that)
            loose = relations.outcomes_obey(
                rel, base, changed, relations.RTOL, relations.ATOL, factors
            )
            assert loose, (p["id"], rel, base, changed)
    for probe in catalogue.probes_of(assignment, function):
        if probe.relation == "identify":
            continue
        seen = by_probe.get(probe.id, [])
        assert seen, f"{function}: probe {probe.id} changes none of the cases"
        assert any(seen), f"{function}: probe {probe.id}'s relation never holds on the reference"


@pytest.mark.parametrize("assignment,function", PROBED)
def test_a_probe_never_modifies_the_case_it_changes(assignment, function):
    """Does building the probes leave every fixed case's own inputs as they were (a change
    works on fresh objects)?"""
    fspec = assignments.get(assignment).function(function)
    before = [encode(list(c.args)) for c in fspec.cases]
    inputs = evaluate.materialize(assignment, fspec, seeds.PUBLIC_DEFAULT_SECRET)
    relations.probe_inputs(assignment, fspec, seeds.PUBLIC_DEFAULT_SECRET, None, inputs)
    assert [encode(list(c.args)) for c in fspec.cases] == before


def _jensen_shannon(policy, reference):
    """A symmetric divergence where the KL is asked: right on equal inputs, wrong elsewhere."""
    ns = reference_ns("01_exact_kl")
    ns["_check_distributions"](policy, reference, True)
    p, q = [float(x) for x in policy], [float(x) for x in reference]
    m = [(a + b) / 2 for a, b in zip(p, q)]

    def kl(a, b):
        return math.fsum(x * math.log(x / y) for x, y in zip(a, b) if x > 0)

    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def reference_ns(a: str) -> dict:
    return reference.namespace(a, ROOT)


def _position_weighted_return(rewards):
    """Each turn's shaped reward counted once per turn up to it (a sum of returns-to-go)."""
    return float(sum((k + 1) * r.shaped_reward for k, r in enumerate(rewards)))


def _padding_counted_mean(values, mask):
    """The masked sum over the row's valid count, the padding multiplied in (0 · NaN = NaN)
    and one more padded position divided in."""
    v, m = np.asarray(values, dtype=float), np.asarray(mask, dtype=float)
    if v.ndim != 2 or v.shape != m.shape or np.any(m.sum(axis=1) == 0):
        raise ValueError("bad input")
    return (np.where(m > 0, v, 0.0).sum(axis=1)) / (m.sum(axis=1) + (m == 0).sum(axis=1) / 2)


def _median_change(before, after, correct):
    """The median change of the correct responses (torch's lower middle value), not their mean."""
    return float((after - before)[correct.bool()].median())


def _min_of_ratios(logp, logp_old, advantages, mask, eps_low=0.2, eps_high=None, mode="token-mean"):
    """min(r, clip(r)) · A, not min(r · A, clip(r) · A): optimistic where A < 0."""
    import torch

    ns = reference_ns("07_beyond_nthr")
    ns["clipped_surrogate"](logp, logp_old, advantages, mask, eps_low, eps_high, mode)  # checks
    high = eps_low if eps_high is None else eps_high
    ratio = torch.exp(torch.where(mask, logp - logp_old.detach(), 0.0))
    o = torch.minimum(ratio, ratio.clamp(1 - eps_low, 1 + high)) * advantages.detach()
    per = torch.where(mask, -o, 0.0)
    if mode == "token-mean":
        return per.sum() / mask.sum()
    if mode == "seq-mean-token-mean":
        return (per.sum(dim=1) / mask.sum(dim=1)).mean()
    return per.sum(dim=1).mean()


def _mask_from_token_ids(logits, tokens, mask):
    """The mask rebuilt from the token ids (id 0 read as padding), the given mask ignored."""
    ns = reference_ns("05_grpo_lld")
    return ns["sequence_logprobs"](logits, tokens, tokens != 0)


def _log_mean_ratio_reward(base_reward, policy_logprobs, ref_logprobs, beta=0.05):
    """The penalty from log(mean exp(p_t − q_t)), not the mean of p_t − q_t."""
    ns = reference_ns("03_sum_vs_mean")
    ns["shaped_reward"](base_reward, policy_logprobs, ref_logprobs, beta)  # the input checks
    d = np.asarray(policy_logprobs, float) - np.asarray(ref_logprobs, float)
    return float(base_reward - beta * np.log(np.mean(np.exp(d))))


# (assignment, function, the learner's function, the relation the feedback must name)
BROKEN = [
    # a penalty that does not double with the log probabilities (on generated checks only:
    # counted, not shown)
    ("03_sum_vs_mean", "shaped_reward", _log_mean_ratio_reward, "relation:both-doubled"),
    ("01_exact_kl", "forward_kl", _jensen_shannon, "relation:swapped"),
    ("04_rlef_turn_rewards", "episode_return", _position_weighted_return, "relation:reordered"),
    # a median does not move when the largest change rises
    ("05_grpo_lld", "likelihood_change", _median_change, "relation:largest-raised"),
    # an optimistic clip: the loss rises when the clip is switched off
    ("07_beyond_nthr", "clipped_surrogate", _min_of_ratios, "relation:clip-off"),
    # a mask that is never read: one fewer marked position changes nothing
    ("05_grpo_lld", "sequence_logprobs", _mask_from_token_ids, "relation:last-valid-masked"),
]


@pytest.mark.parametrize("assignment,function,fn,rid", BROKEN, ids=[b[3] + b[1] for b in BROKEN])
def test_a_broken_relation_is_named_with_the_checks_it_breaks(assignment, function, fn, rid):
    """Is a slip whose results break a stated relation (a KL made symmetric, a return that
    weights later turns more) told that relation, with the change and its own two results on
    a shown check, and charged the failed checks it breaks?"""
    ns = reference_ns(assignment)
    r = kernel.grade_function(assignment, function, fn, namespace=ns, root=ROOT)
    assert r.score < r.points
    d = next((d for d in r.diagnoses if d.id == rid), None)
    assert d is not None, evaluate.feedback_text(r)
    # a shown check among those it breaks gives the learner's two results
    assert d.points > 0, d.text
    assert function == "shaped_reward" or ("before," in d.text and "after" in d.text), d.text


def test_the_same_code_scores_the_same_with_and_without_probes():
    """Does a probe leave the score and every verdict as they were (it is never a check)?"""
    a, name = "01_exact_kl", "forward_kl"
    ns = reference_ns(a)
    fspec = assignments.get(a).function(name)
    inputs = evaluate.materialize(a, fspec, seeds.PUBLIC_DEFAULT_SECRET)
    expected = evaluate.reference_run(a, name, inputs, ROOT)
    got, _ = evaluate.run_cases(_jensen_shannon, inputs, ns)
    mutants = evaluate.mistakes_run(a, fspec, inputs, ROOT)
    _, probes = _probes_with_reference(a, name, seeds.PUBLIC_DEFAULT_SECRET)
    theirs, _ = evaluate.run_cases(_jensen_shannon, probes, ns)
    probes = [dict(p, got=g) for p, g in zip(probes, theirs)]
    plain = evaluate.score(a, fspec, 3.0, inputs, expected, got, None, mutants)
    probed = evaluate.score(a, fspec, 3.0, inputs, expected, got, None, mutants, probes=probes)
    assert probed.score == plain.score
    assert [c.passed for c in probed.cases] == [c.passed for c in plain.cases]
    assert "relation:swapped" in {d.id for d in probed.diagnoses}
    assert "relation:swapped" not in {d.id for d in plain.diagnoses}


def test_probes_run_only_when_a_check_failed():
    """Is the learner's code never run on a probe when every check passes (a right function
    pays nothing for them)?"""
    a, name = "01_exact_kl", "forward_kl"
    ns = reference_ns(a)
    calls = []

    def counted(policy, reference):
        calls.append(1)
        return ns[name](policy, reference)

    kernel.grade_function(a, name, counted, namespace=ns, root=ROOT)
    fspec = assignments.get(a).function(name)
    assert len(calls) == len(fspec.cases)


def test_a_relation_the_learner_keeps_is_not_named():
    """Is a slip that keeps a relation never told it broke it: a KL in log base 2 is still not
    symmetric, still unchanged by reordering, so no relation line, only its own cause?"""
    a, name = "01_exact_kl", "forward_kl"
    ns = reference_ns(a)

    def log2_kl(policy, reference):
        return ns[name](policy, reference) / math.log(2)

    r = kernel.grade_function(a, name, log2_kl, namespace=ns, root=ROOT)
    assert not any(d.id.startswith("relation:") for d in r.diagnoses), evaluate.feedback_text(r)


def test_a_probe_of_a_generated_case_shows_no_value():
    """Does a relation line show the learner's two results only for a shown check, never for a
    generated one (it counts those)?"""
    fspec = assignments.get("01_exact_kl").function("forward_kl")
    hidden = next(i for i, c in enumerate(fspec.cases) if c.hidden)
    probe = {
        "probe": {
            "base": hidden,
            "id": "swapped",
            "relation": "differs",
            "says": "s",
            "change": "c",
        },
        "expected": {"value": 0.5},
        "got": {"value": 0.25},
    }
    expected = [{"value": 0.0}] * len(fspec.cases)
    expected[hidden] = {"value": 0.9}
    got = [{"value": 0.0}] * len(fspec.cases)
    got[hidden] = {"value": 0.25}
    found = relations.broken(fspec, {hidden}, expected, got, [copy.deepcopy(probe)])
    assert found and found[0][1] == {hidden} and found[0][2] == []


def test_the_sandbox_and_the_kernel_give_the_same_relation_line(tmp_path):
    """Does `drills check` (the learner's code in the sandbox, the probes in a run of their
    own after every graded check) give the in-kernel engine's score and lines, the relation
    line word for word?"""
    from autograder.course import grade_cli

    path = symmetric_kl_notebook(tmp_path)
    r = grade_cli.check_notebook(path, "01_exact_kl", student=None)
    assert r.error is None, r.error
    sandboxed = next(f for f in r.functions if f.function == "forward_kl")
    ns = dict(reference_ns("01_exact_kl"))  # a copy: the reference's own stays the reference
    exec(compile("import math\n" + JS_CELL, "<cell>", "exec"), ns)  # noqa: S102 (our own cell)
    k = kernel.grade_function("01_exact_kl", "forward_kl", ns["forward_kl"], namespace=ns)
    assert sandboxed.score == k.score
    assert [(d.id, d.text, d.points) for d in sandboxed.diagnoses] == [
        (d.id, d.text, d.points) for d in k.diagnoses
    ]
    assert "relation:swapped" in {d.id for d in k.diagnoses}


def test_the_sandbox_runs_probes_only_where_the_feedback_reads_them(tmp_path):
    """Is the extra program run made only for a function whose feedback would read a probe:
    the symmetric KL (nothing catalogued explains it) gets one, a right submission and a KL in
    log base 2 (a known mistake) get none?"""
    import json

    from autograder.course import grade_cli
    from autograder.engine import submission

    def probed(path):
        grader = grade_cli.check_grader()
        sub = submission.Submission(path=path, student=None, assignment="01_exact_kl")
        w = grader._run(grader._read_contained(sub), 0)
        assert sub.error is None and w.execution is not None
        return set(w.probe_results)

    js = symmetric_kl_notebook(tmp_path)
    assert probed(js) == {"forward_kl"}
    nb = json.loads(js.read_text())
    right = tmp_path / "01_exact_kl-solution.ipynb"
    right.write_text(
        json.dumps(learner_notebook("01_exact_kl", "solution", None, secret=SECRETS[0])),
        encoding="utf-8",
    )
    assert probed(right) == set()
    for cell in nb["cells"]:
        if "def forward_kl" in "".join(cell["source"]):
            cell["source"] = "import math\n" + JS_CELL.replace(
                "    return 0.5 * kl(p, m) + 0.5 * kl(q, m)",
                "    return kl(p, q) / math.log(2) if all(y > 0 for x, y in zip(p, q) if x > 0)"
                " else math.inf",
            )
    log2 = tmp_path / "01_exact_kl-log2.ipynb"
    log2.write_text(json.dumps(nb), encoding="utf-8")
    assert probed(log2) == set()


def test_a_probe_is_served_the_callees_its_checks_are():
    """Does a probe run the learner's own helper where the checks did (a helper that is
    defined and not a stub is not served by value), so that a relation compares two results
    of the same code, never the learner's helper on a check with the reference's on a probe?"""
    a = "01_exact_kl"
    ns = dict(reference_ns(a))
    exec(compile("import math\n" + JS_CELL, "<cell>", "exec"), ns)  # noqa: S102 (our own cell)
    helper, calls = ns["_check_distributions"], []

    def counted(*args, **kwargs):
        calls.append(1)
        return helper(*args, **kwargs)

    ns["_check_distributions"] = counted
    r = kernel.grade_function(a, "forward_kl", ns["forward_kl"], namespace=ns)
    assert "relation:swapped" in {d.id for d in r.diagnoses}
    fspec = assignments.get(a).function("forward_kl")
    inputs = evaluate.materialize(a, fspec, seeds.PUBLIC_DEFAULT_SECRET)
    probes = relations.probe_inputs(a, fspec, seeds.PUBLIC_DEFAULT_SECRET, None, inputs)
    assert len(calls) == len(fspec.cases) + len(probes)


# -- the lines the probes feed beyond a broken relation -------------------------------------------


def test_a_ratio_upside_down_is_told_the_two_inputs_are_the_wrong_way_round():
    """Caught: a clipped surrogate whose ratio is π_old / π_new (logp_new and logp_old the
    wrong way round) was told only "Not recognised" for most of its loss. Its result on the
    exchanged inputs is the expected result of the original ones: the line says so."""
    a, name = "07_beyond_nthr", "clipped_surrogate"
    ns = reference_ns(a)
    ref = ns[name]

    def inverted(logp_new, logp_old, advantages, mask, *args, **kwargs):
        return ref(logp_old, logp_new, advantages, mask, *args, **kwargs)

    r = kernel.grade_function(a, name, inverted, namespace=ns, root=ROOT)
    first = [d for d in r.diagnoses if d.kind != "validation"][0]
    assert first.id == "shape:exchanged", evaluate.feedback_text(r)
    assert "`logp_new` and `logp_old` the other way round" in first.text, first.text


def test_an_exchange_is_not_named_where_one_failed_check_does_not_fit():
    """Say less rather than something untrue: a k3 computed the other way round AND doubled
    is not the expected result on the exchanged inputs, so no exchange line."""
    a, name = "02_clipped_estimators", "k3"
    ns = reference_ns(a)
    ref = ns[name]

    def other_way_doubled(logp, ref_logp):
        return 2 * ref(ref_logp, logp)

    r = kernel.grade_function(a, name, other_way_doubled, namespace=ns, root=ROOT)
    assert r.score < r.points
    assert "shape:exchanged" not in {d.id for d in r.diagnoses}, evaluate.feedback_text(r)


def test_a_log_softmax_in_bfloat16_is_told_its_error_is_a_lower_precision_s():
    """Caught: a sequence_logprobs whose log-softmax runs in bfloat16 (off by about 3e-3
    relative, 250 times the tolerance) got a near miss on one check and "Not recognised" on
    the rest. Every failed value is within 2 % of the expected one: the precision line."""
    import torch

    a, name = "05_grpo_lld", "sequence_logprobs"
    ns = reference_ns(a)
    ref = ns[name]

    def in_bf16(logits, tokens, mask):
        low = logits.to(torch.bfloat16).log_softmax(-1).to(logits.dtype)
        shifted = low - torch.logsumexp(low, -1, keepdim=True)  # log-softmax again: rounding only
        return ref(shifted, tokens, mask)

    r = kernel.grade_function(a, name, in_bf16, namespace=ns, root=ROOT)
    assert r.score < r.points
    ids = [d.id for d in r.diagnoses]
    assert "near-miss:precision" in ids, evaluate.feedback_text(r)
    assert "bfloat16" in next(d.text for d in r.diagnoses if d.id == "near-miss:precision")


def test_a_bessel_factor_is_named_by_its_shape_not_as_a_precision():
    """A factor of n / (n − 1) moves every value by some percent too, but it is a count: the
    mean-over-samples relation names it, and the precision line is not given."""
    a, name = "02_clipped_estimators", "monte_carlo_kl"
    ns = reference_ns(a)
    ref = ns[name]

    def bessel(samples, policy, reference, estimator):
        n = len(list(samples))
        value = ref(samples, policy, reference, estimator)
        return value * n / (n - 1) if n > 1 else value

    r = kernel.grade_function(a, name, bessel, namespace=ns, root=ROOT)
    ids = [d.id for d in r.diagnoses]
    assert r.score < r.points and "relation:samples-twice" in ids, evaluate.feedback_text(r)
    assert "near-miss:precision" not in ids, evaluate.feedback_text(r)


def test_scores_mixing_the_tokens_of_a_are_told_each_token_is_scored_on_its_own():
    """Caught: a token_scores that combines the two similarity matrices by a matrix product
    (so every score reads every token of a) got "Not recognised"; doubling one token's hidden
    state now shows its score is not its own."""
    import torch

    a, name = "06_nthr", "token_scores"
    ns = reference_ns(a)

    def mixed(h_a, err_a, h_b, err_b):
        return ((err_a @ err_b.T) @ (h_b @ h_a.T)).sum(dim=1)

    r = kernel.grade_function(a, name, mixed, namespace=ns, root=ROOT)
    assert r.score < r.points
    assert "relation:first-h-a-doubled" in {d.id for d in r.diagnoses}, evaluate.feedback_text(r)
    assert torch  # the inputs are tensors


def test_a_kl_term_taken_twice_is_told_the_return_reads_only_the_shaped_rewards():
    """Caught: an episode return that subtracts beta · mean_log_ratio again from each shaped
    reward got "Not recognised"; moving each mean log ratio with the shaped reward kept moves
    its return."""
    a, name = "04_rlef_turn_rewards", "episode_return"
    ns = reference_ns(a)

    def twice(rewards):
        return float(sum(r.shaped_reward - r.beta * r.mean_log_ratio for r in rewards))

    r = kernel.grade_function(a, name, twice, namespace=ns, root=ROOT)
    assert r.score < r.points
    assert "relation:components-moved" in {d.id for d in r.diagnoses}, evaluate.feedback_text(r)


def test_a_change_a_slip_makes_to_an_input_is_named_where_it_gives_the_learners_values():
    """Caught: an nthr_weights that selects by |score| got "Not recognised" (or a line about
    `beta`, which was right); its values are exactly the formula's on |neg_scores|."""
    a, name = "06_nthr", "nthr_weights"
    ns = reference_ns(a)
    ref = ns[name]

    def by_abs(neg_scores, pos_mean_scores, beta=1.0, eta=0.0):
        return ref(neg_scores.abs(), pos_mean_scores, beta, eta)

    r = kernel.grade_function(a, name, by_abs, namespace=ns, root=ROOT)
    assert r.score < r.points
    first = [d for d in r.diagnoses if d.kind != "validation"][0]
    assert first.id == "shape:identified", evaluate.feedback_text(r)
    assert "absolute value" in first.text, first.text


def test_an_inverted_mask_is_named_where_the_formula_on_it_gives_the_learners_values():
    """A masked_mean that reads the mask as a padding mask (True = pad) averages the padded
    positions: its values are the formula's with the mask inverted, where every row keeps one."""
    a, name = "03_sum_vs_mean", "masked_mean"
    ns = reference_ns(a)
    ref = ns[name]

    def inverted(values, mask):
        m = np.asarray(mask).astype(bool)
        if m.ndim == 2 and (~m).any(axis=1).all():
            return ref(values, ~m)
        return ref(values, mask) + 1.0  # something else wrong where no row can be inverted

    r = kernel.grade_function(a, name, inverted, namespace=ns, root=ROOT)
    assert r.score < r.points
    assert "shape:identified" in {d.id for d in r.diagnoses}, evaluate.feedback_text(r)
