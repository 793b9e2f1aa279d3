"""The localisation lines: where a learner's failed checks fall, when nothing names their cause.

A "where" line says on which checks a function is right and on which it goes wrong, in words
the notebook uses (a mode, an input function, an argument given or left to its default, how
an input is passed, an edge rule). It is read from which checks pass, so it must be true of
them: every check it calls right passes, every failed check it takes lies on its wrong side,
and it never names a generated input.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT

from autograder import assignments
from autograder.cases import seeds
from autograder.notebooks import reference
from autograder.scoring import evaluate, kernel, where


def test_one_mode_wrong_beside_a_property_line_is_localised_to_that_mode():
    """aggregate_loss with two slips: token-mean masked by multiplication (NaN padding poisons
    it: the stated property names it on that check) and seq-mean-token-sum taking each row's
    largest valid value instead of its sum (no mistake, shape or property names it). The
    second slip's 8 checks were "Not recognised"; they all have one mode, and every check of
    the modes the code gets right passes."""
    a = "03_sum_vs_mean"
    ns = reference.namespace(a, ROOT)
    ref = ns["aggregate_loss"]

    def aggregate_loss(values, mask, mode, max_len=None):
        out = ref(values, mask, mode, max_len)
        v, m = np.asarray(values, float), np.asarray(mask, bool)
        if mode == "seq-mean-token-sum":
            return float(np.mean([r[k].max() if k.any() else 0.0 for r, k in zip(v, m)]))
        if mode == "token-mean":
            return float((v * m).sum() / m.sum())
        return out

    r = kernel.grade_function(a, "aggregate_loss", aggregate_loss, namespace=ns, root=ROOT)
    text = evaluate.feedback_text(r)
    ids = [d.id for d in r.diagnoses]
    # the largest value stays when the last valid position is masked out (when it is not that
    # largest): the relation a sum or a mean keeps says so on the checks where that shows
    assert ids in (
        ["property:aggregate-within-values", "where:mode"],
        ["relation:last-valid-masked", "property:aggregate-within-values", "where:mode"],
    ), text
    (line,) = [d for d in r.diagnoses if d.kind == "where"]
    right, _, wrong = line.text.partition("passes;")
    assert "'seq-mean-token-sum'" in wrong and "'seq-mean-token-sum'" not in right, text
    # token-mean fails on its NaN-padding check: it is never called right
    assert "'token-mean'" not in right and "'seq-mean-token-mean'" in right, text
    assert "Where your function goes wrong" in text and r.unexplained_checks == 0, text


# functions with modes, input functions, optional arguments, input types and edge rules
FUNCTIONS = [
    ("03_sum_vs_mean", "aggregate_loss"),
    ("02_clipped_estimators", "monte_carlo_kl"),
    ("07_beyond_nthr", "clipped_surrogate"),
    ("01_exact_kl", "forward_kl"),
    ("03_sum_vs_mean", "masked_mean"),
    ("04_rlef_turn_rewards", "task_reward"),
    ("05_grpo_lld", "lld_rate"),
]


@pytest.mark.parametrize("assignment,function", FUNCTIONS, ids=[f for _, f in FUNCTIONS])
def test_a_where_line_is_true_of_every_check_it_speaks_of(assignment, function):
    """Over many patterns of failed checks (random, and each feature value failing alone), a
    localisation never calls a check right that failed, takes only failed checks that lie on
    its wrong side, names on the wrong side only values that hold one of them, and names no
    generated input and no hidden check."""
    fspec = assignments.get(assignment).function(function)
    inputs = evaluate.materialize(assignment, fspec, seeds.course_secret(None))
    names = evaluate._arg_names(assignment, function)
    among = sorted(set(fspec.of_kind("value") + fspec.of_kind("edge")))
    feats = {i: where.features(fspec, i, inputs[i], names) for i in among}
    rng = np.random.default_rng(0)
    patterns = [set(rng.choice(among, size=rng.integers(1, 6), replace=False)) for _ in range(300)]
    for key in {k for f in feats.values() for k in f}:  # one value of a feature failing
        for value in {f[key] for f in feats.values() if key in f}:
            patterns.append({i for i in among if feats[i].get(key) == value})
    seen = 0
    for failed in patterns:
        failed = {int(i) for i in failed}
        todo = set(sorted(failed)[: max(1, len(failed) - 1)])  # another line owns the rest
        w = where.localise(fspec, among, failed, todo, inputs, names)
        if w is None:
            continue
        seen += 1
        assert w.cases == frozenset(todo)
        assert w.key[0] in (
            "mode",
            "fn",
            "flag",
            "given",
            "sign",
            "masked",
            "rule",
            "type",
            "dtype",
            "zero",
        )
        if w.key[0] in ("sign", "zero"):  # one value, every check of it failed: a clean split
            assert len(w.wrong) == 1, w.text
            assert all(i in failed for i in among if key_value(feats[i], w) in w.wrong), w.text
        for i in among:
            if key_value(feats[i], w) in w.right:
                assert i not in failed, (w.text, fspec.cases[i].id)
        for i in todo:
            assert key_value(feats[i], w) in w.wrong, (w.text, fspec.cases[i].id)
        for v in w.wrong:
            assert any(key_value(feats[i], w) == v for i in todo), w.text
        for c in fspec.cases:
            if c.hidden:
                assert c.id not in w.text, w.text
    assert seen, "no pattern gave a localisation: the test checks nothing"


def test_a_slip_on_larger_inputs_is_told_by_a_relation_never_by_a_size():
    """monte_carlo_kl that drops the first sample (samples[1:]) is right on the checks with a
    few samples and wrong on every larger sample. A line that said "the checks with more
    entries fail" was true of the checks but pointed at the wrong thing for slips about a
    value (a zero dropped, a clip), so no line names a size; the probe that gives every sample
    twice shows what this one does: the result is not a mean over all the samples."""
    a = "02_clipped_estimators"
    ns = reference.namespace(a, ROOT)
    ref = ns["monte_carlo_kl"]

    def monte_carlo_kl(samples, p, q, estimator):
        ref(samples, p, q, estimator)
        rest = list(samples)[1:] or list(samples)
        return ref(rest, p, q, estimator)

    r = kernel.grade_function(a, "monte_carlo_kl", monte_carlo_kl, namespace=ns, root=ROOT)
    text = evaluate.feedback_text(r)
    assert not any(d.id == "where:size" for d in r.diagnoses), text
    assert "relation:samples-twice" in [d.id for d in r.diagnoses], text


def key_value(f: dict, w: where.Where):
    return f.get(w.key, object())


def test_no_localisation_when_every_value_of_a_feature_fails():
    """The right side must hold passing checks: failures on every mode say nothing."""
    a, fn = "03_sum_vs_mean", "aggregate_loss"
    fspec = assignments.get(a).function(fn)
    inputs = evaluate.materialize(a, fspec, seeds.course_secret(None))
    names = evaluate._arg_names(a, fn)
    among = sorted(set(fspec.of_kind("value") + fspec.of_kind("edge")))
    assert where.localise(fspec, among, set(among), set(among), inputs, names) is None


def test_a_string_only_generated_cases_hold_is_never_named_as_a_mode():
    """An extract_code that reads an indented fence line as a fence (it strips each line)
    fails two fixed edge checks only, and the line read "every check with `response` =
    'Attempt 250844:\\n```python…' or … passes": every passing response, the generated ones
    among them, in the learner's feedback. Is a string argument named as a mode only when a
    few values take it, each held by a check the notebook shows, so no response is quoted?"""
    a = "04_rlef_turn_rewards"
    ns = reference.namespace(a, ROOT)
    ref = ns["extract_code"]

    def extract_code(response):
        if isinstance(response, str):
            lines = response.split("\n")
            response = "\n".join(x.strip() if x.strip().startswith("```") else x for x in lines)
        return ref(response)

    r = kernel.grade_function(a, "extract_code", extract_code, namespace=ns, root=ROOT)
    text = evaluate.feedback_text(r, max_cases=50)
    spec = {f.name: f for f in assignments.get(a).functions}["extract_code"]
    generated = [c for c in spec.cases if c.hidden]
    assert generated and r.score < r.points, text  # the learner fails the generated checks
    assert "`response` =" not in text, text
    assert "Attempt " not in text, text


def test_a_flag_argument_splits_right_from_wrong():
    """task_reward giving the final turn's failing valid code -0.2 (the non-final reward)
    instead of -1: no mistake, shape or property named it ("Not recognised: 6 failed checks");
    every check with `is_final` = False passes and every failed one has it True, and a flag's
    value is the text's own word, so the line says so."""
    a = "04_rlef_turn_rewards"
    ns = reference.namespace(a, ROOT)
    ref = ns["task_reward"]

    def task_reward(turn, is_final):
        out = ref(turn, is_final)
        if is_final and out == -1.0 and ns["extract_code"](turn.response) is not None:
            return -0.2
        return out

    r = kernel.grade_function(a, "task_reward", task_reward, namespace=ns, root=ROOT)
    text = evaluate.feedback_text(r)
    lines = [d for d in r.diagnoses if d.kind == "where"]
    assert [d.id for d in lines] == ["where:flag"], text
    assert "every check with `is_final` = False passes" in lines[0].text, text
    assert "have `is_final` = True" in lines[0].text, text


def test_a_sign_is_named_only_where_it_splits_the_checks_cleanly():
    """clipped_surrogate resolving its default with `eps_high or eps_low` treats an explicit
    eps_high = 0 (the text allows it) like None: only the check with eps_high = 0 fails, and
    every check with eps_high > 0 passes, so the line names the sign. A data input whose sign
    only happens to line up with some failures (some of each sign failing) is never named:
    the localisation test above checks every sign line it gives is a clean split."""
    a = "07_beyond_nthr"
    ns = reference.namespace(a, ROOT)
    ref = ns["clipped_surrogate"]

    def clipped_surrogate(
        logp, logp_old, advantages, mask, eps_low=0.2, eps_high=None, mode="token-mean"
    ):
        return ref(logp, logp_old, advantages, mask, eps_low, eps_high or eps_low, mode)

    r = kernel.grade_function(a, "clipped_surrogate", clipped_surrogate, namespace=ns, root=ROOT)
    text = evaluate.feedback_text(r)
    lines = [d for d in r.diagnoses if d.kind == "where"]
    assert [d.id for d in lines] == ["where:sign"], text
    assert "every check with `eps_high` > 0 passes" in lines[0].text, text
    assert "`eps_high` = 0" in lines[0].text, text


def _turn_rewards_with(change):
    a = "04_rlef_turn_rewards"
    ns = reference.namespace(a, ROOT)
    ref = ns["turn_rewards"]

    def turn_rewards(turns, beta=0.05, max_turns=3):
        out = ref(turns, beta, max_turns)
        return [change(r, k == len(out) - 1) for k, r in enumerate(out)]

    r = kernel.grade_function(a, "turn_rewards", turn_rewards, namespace=ns, root=ROOT)
    return r, evaluate.feedback_text(r)


def _part_claims_hold(r, line):
    """Every part the line calls right is right on every check that returns a value."""
    right = line.text.split(" right on every check")[0]
    for c in r.cases:
        if c.kind not in ("value", "edge") or "value" not in c.expected:
            continue
        for e, g in zip(c.expected["value"], c.got.get("value") or []):
            for f, v in e["fields"].items():
                if f"`{f}`" in right and f"`{f}` of" not in right:
                    assert v == pytest.approx(g["fields"][f], rel=1e-4, abs=1e-6), (c.id, f)


def test_a_wrong_field_of_a_record_is_localised_to_that_field():
    """turn_rewards storing beta · mean in the record's mean_log_ratio field (the shaped reward
    still right): 21 failed checks were "Not recognised" though only one field is wrong on
    every one of them. The line names that field, and the fields that are right."""
    import dataclasses

    r, text = _turn_rewards_with(
        lambda rec, last: dataclasses.replace(rec, mean_log_ratio=rec.beta * rec.mean_log_ratio)
    )
    lines = [d for d in r.diagnoses if d.kind == "where"]
    assert [d.id for d in lines] == ["where:part"], text
    right, _, wrong = lines[0].text.partition("right on every check")
    assert "`mean_log_ratio`" in wrong and "`mean_log_ratio`" not in right, text
    assert "`shaped_reward`" in right and "`task_reward`" in right, text
    _part_claims_hold(r, lines[0])


def test_a_wrong_item_place_is_localised_to_the_items_before_the_last():
    """turn_rewards applying the KL penalty on the final turn only: the last record is right,
    and every record before it has the wrong shaped_reward; the line says so (it said only
    that one-turn episodes pass)."""
    import dataclasses

    r, text = _turn_rewards_with(
        lambda rec, last: rec if last else dataclasses.replace(rec, shaped_reward=rec.task_reward)
    )
    lines = [d for d in r.diagnoses if d.kind == "where"]
    assert [d.id for d in lines] == ["where:part"], text
    right, _, wrong = lines[0].text.partition("right on every check")
    assert "`shaped_reward` of every item before the last" in wrong, text
    assert "`shaped_reward` of the last item" in right, text
    _part_claims_hold(r, lines[0])


def test_no_part_is_called_right_when_it_fails_somewhere():
    """Every field wrong on some check (the whole record scaled): no part line."""
    import dataclasses

    r, text = _turn_rewards_with(
        lambda rec, last: dataclasses.replace(
            rec,
            task_reward=2 * rec.task_reward,
            mean_log_ratio=2 * rec.mean_log_ratio,
            beta=2 * rec.beta,
            shaped_reward=2 * rec.shaped_reward,
        )
    )
    assert "where:part" not in [d.id for d in r.diagnoses], text


def test_failed_gradient_checks_on_the_same_side_join_the_where_line():
    """clipped_surrogate falling back to eps_high = 0.28 (DAPO's clip-higher) when eps_high is
    None: the value checks and the gradient checks that leave eps_high to its default fail,
    and every check that gives it passes. The gradient checks had a line of their own,
    "differs … as your values do", which names no cause; they fall on the same side, so the
    where line owns them (one place, one line)."""
    a = "07_beyond_nthr"
    ns = reference.namespace(a, ROOT)
    ref = ns["clipped_surrogate"]

    def clipped_surrogate(
        logp, logp_old, advantages, mask, eps_low=0.2, eps_high=None, mode="token-mean"
    ):
        return ref(
            logp, logp_old, advantages, mask, eps_low, 0.28 if eps_high is None else eps_high, mode
        )

    r, text = (
        kernel.grade_function(a, "clipped_surrogate", clipped_surrogate, namespace=ns, root=ROOT),
        None,
    )
    text = evaluate.feedback_text(r)
    ids = [d.id for d in r.diagnoses]
    assert ids == ["where:given"], text
    failed_grad = [c for c in r.cases if c.kind == "gradient" and not c.passed]
    assert failed_grad and r.unexplained_checks == 0, text


def test_checks_without_padding_are_localised_by_the_mask():
    """aggregate_loss right on every padded batch and wrong on the batches whose mask holds no
    padding (a code that reads T from the first padded position, say): the line says the
    failed checks are those whose `mask` leaves nothing out, in the text's words (a mask's
    True and False), never a value."""
    a, fn = "03_sum_vs_mean", "aggregate_loss"
    fspec = assignments.get(a).function(fn)
    inputs = evaluate.materialize(a, fspec, seeds.course_secret(None))
    names = evaluate._arg_names(a, fn)
    among = sorted(set(fspec.of_kind("value") + fspec.of_kind("edge")))
    feats = {i: where.features(fspec, i, inputs[i], names) for i in among}
    failed = {i for i in among if feats[i].get(("masked", "mask")) is False}
    assert failed
    w = where.localise(fspec, among, failed, failed, inputs, names)
    assert w is not None and w.key == ("masked", "mask"), w
    assert "every entry of `mask` True (1)" in w.text.split("passes;")[1], w.text
    assert "some entry of `mask` False (0)" in w.text.split("passes;")[0], w.text
