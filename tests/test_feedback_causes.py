"""No untrue cause in feedback: every line that explains a loss says what is true of the
learner's code, or says less.

Each test is named after the mistake it catches, written as a learner would (not a catalogued
mutant), and checks the line the feedback once gave it: a clamp told of a 04 final reward
that ignores the public tests (two failing checks fit it, eighteen passing ones do not); "you
subtracted the other way round" told of a negated THR, which subtracts nothing; "never rebuilt
from numbers" told of a function that raised under autograd; `log-of-softmax` told of a softmax
written by hand that overflows exp(200); and one cause, advantages that are not detached,
told twice with its cost split between the two lines.
"""

from __future__ import annotations

import pytest
import torch
from conftest import ROOT

from autograder.notebooks import reference
from autograder.scoring import evaluate, kernel, shapes


def _grade(a: str, function: str, make):
    """The feedback on ``make(ns)``, the learner's function, in the kernel's engine."""
    ns = reference.namespace(a, ROOT)
    r = kernel.grade_function(a, function, make(ns), namespace=ns, root=ROOT)
    return r, evaluate.feedback_text(r, max_cases=2)


def _lines(r) -> str:
    return "\n".join(d.text for d in r.diagnoses)


# -- a clamp the passing checks contradict ---------------------------------------------------------


def test_a_final_reward_that_ignores_the_public_tests_is_not_told_a_clamp():
    """04 `task_reward` with +1 for a final turn that passed the private tests, whatever the
    public ones say: two final turns failing only the public tests get +1 for -1. Read from
    those two checks alone, the values are "the expected ones clamped at one constant: every
    expected value below it is that constant in yours"; but the final turns that failed every
    test pass with -1, below that constant and not clamped. That line is not said."""
    a = "04_rlef_turn_rewards"

    def make(ns):
        ref, extract = ns["task_reward"], ns["extract_code"]

        def task_reward(turn, is_final):
            r = ref(turn, is_final)  # the reference's checks and every other branch
            if is_final and extract(turn.response) is not None:
                return 1.0 if turn.private_passed else -1.0
            return r

        return task_reward

    r, text = _grade(a, "task_reward", make)
    assert r.score < r.points, text
    assert not any(d.id == "shape:clamped" for d in r.diagnoses), text
    assert "clamped" not in _lines(r), text
    # every point lost is still accounted for, by a line that names no cause: where the
    # failed checks fall (every one has `is_final` = True), or "Not recognised"
    assert all(d.kind == "where" for d in r.diagnoses), text
    owned = r.unexplained + sum(d.points for d in r.diagnoses)
    assert abs(owned - (r.points - r.score)) < 0.011, text


def _row(expected: list[float], got: list[float]):
    return ({"args": [], "kwargs": {}}, {"value": expected}, {"value": got}, 1e-6, 1e-9)


def test_a_clamp_is_named_only_when_no_passing_check_contradicts_it():
    """The shape itself: two failing checks where -1 became +1 read as a clamp at 1 from
    below; a passing check where -1 stayed -1 contradicts it, one where 3 stayed 3 does not."""
    failing = [_row([-1.0, 2.0], [1.0, 2.0]), _row([-2.0, 5.0], [1.0, 5.0])]
    alone = shapes.find_shape(failing)
    assert alone is not None and alone.id == "clamped", alone
    assert shapes.find_shape(failing, passing=[_row([3.0, 4.0], [3.0, 4.0])]) == alone
    assert shapes.find_shape(failing, passing=[_row([-1.0, 4.0], [-1.0, 4.0])]) is None


def test_a_constant_that_passing_checks_do_not_return_is_not_said_to_ignore_the_inputs():
    """The same number on every failing check is what they show; "your result does not depend
    on them" is untrue when a passing check returned another number."""
    failing = [_row([0.5, 2.0], [7.0, 7.0]), _row([3.0, 4.0], [7.0, 7.0])]
    alone = shapes.find_shape(failing)
    assert alone is not None and "does not depend on them" in alone.text, alone
    beside = shapes.find_shape(failing, passing=[_row([1.0, 2.0], [1.0, 2.0])])
    assert beside is not None and beside.id == "constant", beside
    assert "does not depend" not in beside.text and "you returned 7" in beside.text, beside


def test_a_sign_rule_of_the_entries_is_not_named_when_a_passing_check_contradicts_it():
    """ "Your values differ exactly where x < 0, and are right everywhere else": not when a
    passing check has an entry with x < 0 that is right."""

    def row(x, e, g):
        return ({"args": [x], "kwargs": {}}, {"value": e}, {"value": g}, 1e-6, 1e-9)

    failing = [row([-1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [5.0, 2.0, 3.0])] * 2
    found = shapes.where_differs(failing, ["x"])
    assert found is not None and "`x` < 0" in found.text, found
    fine = row([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert shapes.where_differs(failing, ["x"], [fine]) == found
    against = row([-4.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    less = shapes.where_differs(failing, ["x"], [against])
    assert less is None or "`x`" not in less.text, less  # at most where, on the failing ones


# -- a negated result told it subtracted -----------------------------------------------------------


@pytest.mark.parametrize("function", ["thr_token_scores", "thr_weights"])
def test_a_negated_thr_is_not_told_it_subtracted_the_other_way_round(function):
    """07 `thr_token_scores` (and `thr_weights`) returning minus the right value: a product
    and a sum, no subtraction anywhere. The line says what is seen, the negatives of the
    expected values, and where a sign can be lost, not that a difference was reversed."""
    r, text = _grade("07_beyond_nthr", function, lambda ns: lambda *a: -ns[function](*a))
    first = r.diagnoses[0]
    assert first.id == "shape:sign", text
    assert "you subtracted" not in first.text, text
    assert "negative of the expected one" in first.text, text


# -- a function that raised, told it rebuilt its result from numbers ---------------------------


def _surrogate_raising(how: str):
    def make(ns):
        ref = ns["clipped_surrogate"]

        def clipped_surrogate(logp, logp_old, advantages, mask, *args, **kwargs):
            out = ref(logp, logp_old, advantages, mask, *args, **kwargs)
            if how == "in-place":
                ratio = torch.exp(logp - logp_old)
                ratio.mul_(1.0)  # exp saved its output for backward: autograd raises then
                return out + 0.0 * ratio.sum()
            (logp * 1.0).requires_grad_(False)  # a non-leaf: raises when logp has gradient
            return out

        return clipped_surrogate

    return make


@pytest.mark.parametrize("how", ["in-place", "requires_grad_"])
def test_an_in_place_op_or_requires_grad_on_a_non_leaf_is_not_told_it_was_rebuilt_from_numbers(
    how,
):
    """07 `clipped_surrogate` right in value, raising RuntimeError on every gradient check
    (an in-place change of a tensor autograd saved; requires_grad_(False) on a computed
    tensor): the line says the function raised, not "return a torch tensor computed from
    the inputs, never rebuilt from numbers", which is not what happened."""
    r, text = _grade("07_beyond_nthr", "clipped_surrogate", _surrogate_raising(how))
    grad = [c for c in r.cases if c.kind == "gradient"]
    assert grad and all(c.got.get("raised") == "RuntimeError" for c in grad), text
    line = next(d for d in r.diagnoses if d.id == "gradient")
    assert "rebuilt from numbers" not in line.text, text
    assert "raised RuntimeError" in line.text, text
    assert line.points == pytest.approx(sum(k.points for k in r.kinds if k.kind == "gradient"))


def test_a_backward_hook_is_told_the_hook_not_a_result_rebuilt_from_numbers():
    """07 `clipped_surrogate` that registers a hook on logp: the grader refuses to read that
    gradient (TamperedAutograd) and says so in its own words."""

    def make(ns):
        ref = ns["clipped_surrogate"]

        def clipped_surrogate(logp, *args, **kwargs):
            out = ref(logp, *args, **kwargs)
            if isinstance(logp, torch.Tensor) and logp.requires_grad:
                logp.register_hook(lambda g: 2 * g)
            return out

        return clipped_surrogate

    r, text = _grade("07_beyond_nthr", "clipped_surrogate", make)
    line = next(d for d in r.diagnoses if d.id == "gradient")
    assert "a backward hook was registered" in line.text, text
    assert "rebuilt from numbers" not in line.text, text


def test_an_exception_type_of_the_learners_naming_is_not_named_from_a_check_run_after_a_generated_one():
    """A type the learner's code defined is named at will (it could spell a generated input):
    the raised-on-gradient line names it only from a check whose inputs are public and that
    ran before any generated one; here every gradient check runs after generated ones."""

    def make(ns):
        ref = ns["clipped_surrogate"]
        spelled = type("Input_0_2231", (Exception,), {})

        def clipped_surrogate(logp, *args, **kwargs):
            out = ref(logp, *args, **kwargs)
            if isinstance(logp, torch.Tensor) and logp.requires_grad:
                raise spelled("no")
            return out

        return clipped_surrogate

    r, text = _grade("07_beyond_nthr", "clipped_surrogate", make)
    assert all(c.after_generated or c.hidden for c in r.cases if c.kind == "gradient")
    line = next(d for d in r.diagnoses if d.id == "gradient")
    assert "Input_0_2231" not in line.text, text
    assert "an exception of a type your code defined" in line.text, text


def test_a_result_rebuilt_as_a_float_is_still_told_so():
    """The cause stays where it is true: a float returned (no tensor, no gradient)."""
    r, text = _grade(
        "07_beyond_nthr",
        "clipped_surrogate",
        lambda ns: lambda *a, **k: float(ns["clipped_surrogate"](*a, **k)),
    )
    line = next(d for d in r.diagnoses if d.id == "gradient")
    assert "never rebuilt from numbers" in line.text, text
    assert "raised" not in line.text, text


# -- an overflow told log(softmax) -----------------------------------------------------------------


def _by_hand_softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)


def test_a_softmax_by_hand_that_overflows_exp_is_not_told_log_of_softmax():
    """05 `sequence_logprobs` as log(exp(z) / sum(exp(z))): exp(200) overflows float32, the
    unlikely token gets log 0 = -inf, as torch.log(torch.softmax(...)) does there. It is told
    the overflow (`softmax-without-max-shift`), never `log-of-softmax`, a call it never made."""

    def make(ns):
        ref = ns["sequence_logprobs"]

        def sequence_logprobs(logits, tokens, mask):
            ref(logits, tokens, mask)
            lp = torch.log(_by_hand_softmax(logits))
            return (lp.gather(-1, tokens.long()[..., None])[..., 0] * mask).sum(1)

        return sequence_logprobs

    r, text = _grade("05_grpo_lld", "sequence_logprobs", make)
    assert r.score < r.points, text
    assert "log-of-softmax" not in [d.id for d in r.diagnoses], text
    assert r.mistake == "softmax-without-max-shift", text

    def log_of_softmax(ns):
        ref = ns["sequence_logprobs"]

        def sequence_logprobs(logits, tokens, mask):
            ref(logits, tokens, mask)
            lp = torch.log(torch.softmax(logits, -1))
            return (lp.gather(-1, tokens.long()[..., None])[..., 0] * mask).sum(1)

        return sequence_logprobs

    r, text = _grade("05_grpo_lld", "sequence_logprobs", log_of_softmax)
    assert r.mistake == "log-of-softmax", text  # the call itself is still named


def test_a_prediction_error_whose_softmax_overflows_is_told_the_overflow():
    """06 `prediction_errors` with exp(z) / sum(exp(z)) on logits of 100 and 1000: NaN,
    named `softmax-without-max-shift`, not a log-softmax."""

    def make(ns):
        ref = ns["prediction_errors"]

        def prediction_errors(logits, tokens):
            ref(logits, tokens)
            one_hot = torch.nn.functional.one_hot(tokens, logits.shape[-1]).to(logits.dtype)
            return one_hot - _by_hand_softmax(logits)

        return prediction_errors

    r, text = _grade("06_nthr", "prediction_errors", make)
    assert r.score < r.points, text
    assert [d.id for d in r.diagnoses] == ["softmax-without-max-shift"], text


# -- one cause, two lines ------------------------------------------------------------------------


def test_advantages_not_detached_beside_another_mistake_is_one_line_with_its_whole_cost():
    """07 `clipped_surrogate` with symmetric bounds (eps_high ignored) and the advantages not
    detached: on the gradient checks with eps_high the gradient into logp differs too, so
    the catalogued `advantages-not-detached` matched half of them and a gradient line said
    "gradient reaches `advantages`" of the other half, the cost split between the two. One
    cause, one line: the recognised mistake costs every gradient check."""

    def make(ns):
        ref = ns["clipped_surrogate"]

        def surrogate(logp, logp_old, adv, mask, eps_low=0.2, eps_high=None, mode="token-mean"):
            ratio = torch.exp(torch.where(mask, logp - logp_old.detach(), 0.0))
            clipped = torch.clamp(ratio, 1 - eps_low, 1 + eps_low)  # eps_high ignored
            per_token = torch.where(mask, -torch.minimum(ratio * adv, clipped * adv), 0.0)
            if mode == "token-mean":
                return per_token.sum() / mask.sum()
            rows = per_token.sum(dim=1)
            if mode == "seq-mean-token-sum":
                return rows.mean()
            return (rows / mask.sum(dim=1)).mean()

        def clipped_surrogate(*args, **kwargs):
            ref(*args, **kwargs)
            return surrogate(*args, **kwargs)

        return clipped_surrogate

    r, text = _grade("07_beyond_nthr", "clipped_surrogate", make)
    # one line says where the gradient goes wrong, and it costs every gradient check: the
    # catalogued `advantages-not-detached`, or the gradient line saying the same (which one
    # depends on how many gradient checks there are: a catalogued mistake is named only when
    # it explains half the failures, and symmetric-bounds explains 6 of the 13 here)
    (line,) = [d for d in r.diagnoses if "advantages" in d.text]
    assert line.id in ("advantages-not-detached", "gradient"), text
    assert "gradient reaches `advantages`" in line.text or line.id != "gradient", text
    gradient = sum(k.points for k in r.kinds if k.kind == "gradient")
    assert line.points == pytest.approx(gradient), text
    assert not any(c.passed for c in r.cases if c.kind == "gradient"), text
    assert any("eps_high" in d.text for d in r.diagnoses), text  # the other cause, named too


def test_checks_left_that_raised_on_valid_inputs_are_told_so_after_the_lines_that_say_more():
    """masked_mean reading the mask as a padding mask (True = pad): rows whose every token is
    valid become empty and raise ValueError("no valid token"); the other checks break the
    stated row mean. The raising checks were "Not recognised"; they are told that the code
    raised on valid inputs, after the property line, and nothing is left unexplained."""
    a = "03_sum_vs_mean"

    def make(ns):
        ref = ns["masked_mean"]

        def masked_mean(values, mask):
            import numpy as np

            ref(values, mask)
            v, m = np.asarray(values, float), ~np.asarray(mask, bool)
            if not m.any(axis=1).all():
                raise ValueError("a row has no valid token")
            return (v * m).sum(axis=1) / m.sum(axis=1)

        return masked_mean

    r, text = _grade(a, "masked_mean", make)
    ids = [d.id for d in r.diagnoses]
    assert "shape:raised" in ids and ids[0] != "shape:raised", text
    (line,) = [d for d in r.diagnoses if d.id == "shape:raised"]
    assert "raised ValueError" in line.text and "valid input" in line.text, text
