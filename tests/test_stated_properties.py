"""The property lines: a function's stated property, named where the learner's outcomes break it.

A property line may only say what is measured: the reference satisfies every stated property on
every case of its function (fixed and generated), so a check that passes never breaks one and a
line never blames a right value; a learner's code that breaks one, and matches no catalogued
mistake or error shape, is told which property and on how many checks, and nothing of a
generated case.
"""

from __future__ import annotations

import pytest
import torch
from conftest import ROOT

from autograder import assignments
from autograder.cases import seeds
from autograder.notebooks import reference
from autograder.scoring import evaluate, kernel, stated
from autograder.scoring.memo import reference_outcomes

PROPERTIES = sorted(stated.STATED)


@pytest.mark.parametrize("assignment,function", PROPERTIES, ids=[f for _, f in PROPERTIES])
def test_the_reference_breaks_no_stated_property_on_any_case(assignment, function):
    fspec = assignments.get(assignment).function(function)
    inputs = evaluate.materialize(assignment, fspec, seeds.course_secret(None))
    expected = reference_outcomes(assignment, fspec, inputs, ROOT)
    kinds = [c.kind for c in fspec.cases]
    idx = [i for i, c in enumerate(fspec.cases) if c.kind != "invalid"]
    found = stated.broken_on(assignment, function, idx, inputs, expected, kinds)
    assert not found, [(p.name, sorted(fspec.cases[i].id for i in hit)) for p, hit in found]


def _grade(a: str, function: str, body):
    ns = reference.namespace(a, ROOT)
    ref = ns[function]

    def learner(*args, **kwargs):
        ref(*args, **kwargs)  # the reference's input checks: only the formula differs
        return body(*args, **kwargs)

    learner.__name__ = function
    r = kernel.grade_function(a, function, learner, namespace=ns, root=ROOT)
    return r, evaluate.feedback_text(r)


def test_prediction_errors_with_a_sigmoid_are_told_rows_must_sum_to_zero():
    """one-hot − sigmoid(logits) matches no catalogued mistake and no error shape: it was
    "Not recognised" for its whole loss; 06's text says each row sums to 0."""

    def errors(logits, tokens):
        oh = torch.nn.functional.one_hot(tokens.long(), logits.shape[1]).to(logits.dtype)
        return oh - torch.sigmoid(logits)

    r, text = _grade("06_nthr", "prediction_errors", errors)
    (line,) = [d for d in r.diagnoses if d.kind == "property"]
    assert line.id == "property:rows-sum-to-zero", text
    assert "sums to 0" in line.text and "A property the notebook states" in text, text
    assert line.points > 0.5 * evaluate.lost_points(r), text


def test_an_inverted_ratio_is_told_which_way_its_gradient_pushes():
    """exp(logp_old − logp): no catalogued mistake; the gradient checks show that minimising
    the loss lowers logp where the advantage is positive, which 07's text rules out."""

    def surrogate(logp, logp_old, adv, mask, eps_low=0.2, eps_high=None, mode="token-mean"):
        high = eps_low if eps_high is None else eps_high
        ratio = torch.exp(torch.where(mask, logp_old.detach() - logp, 0.0))
        a = adv.detach()
        obj = -torch.minimum(ratio * a, torch.clamp(ratio, 1 - eps_low, 1 + high) * a)
        per_token = torch.where(mask, obj, 0.0)
        if mode == "token-mean":
            return per_token.sum() / mask.sum()
        rows = per_token.sum(dim=1)
        return rows.mean() if mode == "seq-mean-token-sum" else (rows / mask.sum(dim=1)).mean()

    r, text = _grade("07_beyond_nthr", "clipped_surrogate", surrogate)
    ids = [d.id for d in r.diagnoses]
    assert "property:surrogate-gradient-direction" in ids, text
    gradient = sum(k.points for k in r.kinds if k.kind == "gradient")
    (line,) = [d for d in r.diagnoses if d.id == "property:surrogate-gradient-direction"]
    assert line.points == pytest.approx(gradient), text


def test_a_property_line_names_no_generated_check_and_no_value():
    """The line (a stated property, or a probe's relation) counts the generated checks it
    covers and names only the fixed ones."""

    def mean(values, mask):
        import numpy as np

        v, m = np.asarray(values, float), np.asarray(mask, bool)
        return np.where(m, v, 0.0).sum(axis=1) / (v.shape[1] - 1)

    r, text = _grade("03_sum_vs_mean", "masked_mean", mean)
    lines = [d for d in r.diagnoses if d.kind == "property"]
    assert lines, text
    fspec = assignments.get("03_sum_vs_mean").function("masked_mean")
    for line in lines:
        for c in fspec.cases:
            if c.hidden:
                assert c.id not in line.text, text
    # here a probe's relation (one more padded position moves T − 1) explains every failure:
    # it shows the learner's two results on shown checks only
    (line,) = lines
    assert line.id == "relation:padded-column" and "hand: yours" in line.text, text


def test_a_catalogued_mistake_is_still_named_before_any_property():
    """A property line only speaks where nothing catalogued does: the catalogued 06
    `softmax-over-positions` also breaks "each row sums to 0", and is named by its id."""

    def errors(logits, tokens):
        oh = torch.nn.functional.one_hot(tokens.long(), logits.shape[1]).to(logits.dtype)
        return oh - torch.softmax(logits, dim=0)

    r, text = _grade("06_nthr", "prediction_errors", errors)
    assert r.diagnoses[0].id == "softmax-over-positions", text
    assert not any(d.kind == "property" for d in r.diagnoses), text


def test_the_checks_a_shape_leaves_over_may_carry_a_property_line():
    """07 `smaug_floor` averaged over every response instead of the correct ones: the values
    are a whole-number ratio off (the shape line), and the gradient checks, which that line does
    not explain, break the stated gradient (−1 / number of correct on a response below its
    reference): they were "Not recognised"; now the property line carries them."""

    def floor(seq, ref, correct):
        gap = torch.relu(ref.detach() - seq)
        return torch.where(correct, gap, 0.0).sum() / len(seq)

    r, text = _grade("07_beyond_nthr", "smaug_floor", floor)
    ids = [d.id for d in r.diagnoses]
    assert ids[:1] == ["shape:factor"] and "property:floor-gradient" in ids, text
    (line,) = [d for d in r.diagnoses if d.id == "property:floor-gradient"]
    assert "failed checks" in line.text, text
    lost = sum(k.points - k.score for k in r.kinds if k.kind == "gradient")
    assert line.points == pytest.approx(lost), text
    assert r.unexplained_checks == 0, text


def test_k1_as_a_ratio_of_logs_is_told_its_sign_rule():
    """k1 written logp / ref_logp (a ratio of the logs, not their difference): no mistake or
    shape names it; the text says k1 is the log ratio, 0 where the two are equal and of the
    sign of logp − ref_logp elsewhere, and the ratio of two negative logs is positive."""
    import numpy as np

    r, text = _grade(
        "02_clipped_estimators",
        "k1",
        lambda lp, lq: np.asarray(lp, float) / np.asarray(lq, float),
    )
    assert "property:k1-sign" in [d.id for d in r.diagnoses], text


def test_thr_weights_with_a_smooth_sign_break_the_stated_weight_values():
    """1 + p · tanh(THR) where 1 + p · sign(THR) belongs: the weights are no longer 1, 1 + p
    or 1 − p; the edge checks the shape line leaves are told so."""

    def weights(thr, dominant, p):
        return torch.where(dominant, 1 + p * torch.tanh(thr), torch.ones_like(thr))

    r, text = _grade("07_beyond_nthr", "thr_weights", weights)
    assert "property:thr-weight-values" in [d.id for d in r.diagnoses], text


def test_records_whose_shaped_reward_is_not_their_own_components_break_it():
    """A TurnReward whose shaped_reward is not task_reward − beta · mean_log_ratio of the same
    record (or whose beta is not the beta passed in) breaks the stated record; the reference's
    records keep it (the first test above, on every case)."""
    a, fn = "04_rlef_turn_rewards", "turn_rewards"
    fspec = assignments.get(a).function(fn)
    inputs = evaluate.materialize(a, fspec, seeds.course_secret(None))
    expected = reference_outcomes(a, fspec, inputs, ROOT)
    kinds = [c.kind for c in fspec.cases]
    idx = [i for i, c in enumerate(fspec.cases) if c.kind == "value"]
    assert not stated.broken_on(a, fn, idx, inputs, expected, kinds)
    bent = []
    for o in expected:
        if "value" not in o:
            bent.append(o)
            continue
        recs = [
            {**rec, "fields": {**rec["fields"], "shaped_reward": rec["fields"]["task_reward"]}}
            for rec in o["value"]
        ]
        bent.append({"value": recs})
    found = stated.broken_on(a, fn, idx, inputs, bent, kinds)
    assert [p.name for p, _ in found] == ["record-components"], found
    (_, hit) = found[0]
    # broken exactly where some record has a reference term to leave out
    assert hit and hit <= set(idx)


def test_a_task_reward_outside_the_stated_four_values_breaks_it():
    """04's TurnReward says r_t is +1, −1, −0.2 or 0: a value of 0.5 (a partial reward for the
    public tests) breaks it; −0.2 where −1 belongs does not (it is one of the four: the
    property says nothing there, rather than something untrue)."""
    a, fn = "04_rlef_turn_rewards", "task_reward"
    fspec = assignments.get(a).function(fn)
    inputs = evaluate.materialize(a, fspec, seeds.course_secret(None))
    kinds = [c.kind for c in fspec.cases]
    idx = [i for i, c in enumerate(fspec.cases) if c.kind == "value"]
    half = [{"value": 0.5}] * len(inputs)
    assert [p.name for p, _ in stated.broken_on(a, fn, idx, inputs, half, kinds)] == [
        "task-reward-values"
    ]
    other = [{"value": -0.2}] * len(inputs)
    assert not stated.broken_on(a, fn, idx, inputs, other, kinds)
