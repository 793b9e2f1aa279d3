"""Honest numbers and text in feedback, and nothing of the answer in it.

Each test is named after the misleading line it catches: a relative error taken from another
element than the one that fails, "-0", a mask printed as ``{'$tensor': …}``, a message cut
mid-word, "(costs 1 points)", "their cells 'X' does not compile", a mistake in float32 told
"something else differs as well", a learner's exception message that carries the reference
or a generated value, and per-case timings in the JSON a learner reads.
"""

from __future__ import annotations

import math

import pytest
from conftest import ROOT

from autograder import assignments
from autograder.cases.codec import encode
from autograder.cases.compare import cut, render, render_outcome, render_pair
from autograder.notebooks import notebook, reference
from autograder.scoring import evaluate, kernel, redact


def test_relative_error_is_read_at_the_element_with_the_largest_difference():
    """Expected 0 where the learner wrote -59.6: never "relative 2.6e-06" taken from another
    element whose expected value is large."""
    e = {"value": encode([0.0, 2.3e7])}
    g = {"value": encode([-59.6, 2.3e7 + 30.0])}
    _, _, note = render_pair(e, g)
    assert "largest difference 60" in note and "where 0 was expected" in note, note
    assert "relative" not in note, note
    _, _, note = render_pair({"value": encode([1.0, 100.0])}, {"value": encode([1.5, 100.1])})
    assert "largest difference 0.5 (relative 0.5)" in note, note


def test_a_negative_zero_prints_as_zero():
    assert render(-0.0) == "0"
    assert render(encode([-0.0, 1.0])) == "[0, 1] (shape (2,))"
    expected, got, _ = render_pair({"value": -0.0}, {"value": 1.0})
    assert expected == "0", expected


def test_a_bool_tensor_is_shown_as_its_values_not_as_the_encoding():
    import torch

    text = render(encode(torch.tensor([True, False, True])))
    assert "$tensor" not in text and "{" not in text, text
    assert text.startswith("[True, False, True]"), text
    assert "$dict" not in render(encode({"a": 1.5}))


def test_a_long_message_is_cut_at_a_word():
    msg = "the mask must hold only zeros and ones but position seventeen holds " + "x" * 5
    shown = render_outcome({"raised": "ValueError", "message": msg * 3})
    body = shown.split(": ", 1)[1]
    assert body.endswith("…") and len(body) <= 120
    assert body[:-1].split()[-1] in msg.split(), body  # the last word shown is a whole word
    assert cut("one two three", 100) == "one two three"


def test_one_point_is_singular():
    d = evaluate.Diagnosis("x", "text", "concept", 1.0)
    assert evaluate.diagnosis_line(d).endswith("(costs 1 point)")
    assert evaluate.points_text(0.5) == "0.5 points"


@pytest.mark.parametrize("helpers", [1, 2])
def test_a_definition_that_does_not_compile_is_named_with_grammar_that_agrees(helpers):
    """05's `group_advantages` cell defines two helpers: with one of them broken its function is
    told "its definition does not compile … reported for it", with both "their definitions do
    not compile … reported for each of them", never a plural verb for one or the reverse."""
    import re

    from autograder.engine import submission

    a = "05_grpo_lld"
    src = notebook.read(notebook.source_path(a, ROOT))
    nb = notebook.read(notebook.source_path(a, ROOT))
    for c in nb.cells:
        if notebook.nbgrader_meta(c).get("grade_id") == "group_advantages":
            for name in re.findall(r"^def (_\w+)\(", c.source, re.M)[:helpers]:
                c["source"] = c.source.replace(f"def {name}(", f"def {name}(:", 1)
    p = submission.build_program(a, src, nb, list(assignments.get(a).names))
    note = p.broken_notes.get("group_advantages", "")
    if helpers == 1:
        assert "because its definition does not compile" in note, note
        assert "reported for it," in note, note
    else:
        assert "because their definitions do not compile" in note, note
        assert "reported for each of them," in note, note


def test_a_mistake_written_in_float32_is_that_mistake_not_something_else_as_well():
    """k3 exponentiated the wrong way, in float32: one of its values overflows float32 to inf
    where the float64 mistake is 4.6e138. Still the same mistake, said plainly."""
    a, f = "02_clipped_estimators", "k3"
    ns = reference.namespace(a, ROOT)
    m = next(x for x in assignments.get(a).function(f).mistakes if x.id == "ratio-exponentiated")
    mutant = m.build(ns)

    def f32(*args):
        import numpy as np

        with np.errstate(all="ignore"):
            return np.asarray(mutant(*args), dtype=np.float32)

    r = kernel.grade_function(a, f, f32, namespace=ns, root=ROOT)
    assert r.mistake == "ratio-exponentiated", r.diagnosis
    assert evaluate.SOMETHING_ELSE not in r.diagnosis, r.diagnosis


def test_a_raised_shape_speaks_of_the_formulas_checks_only():
    """The error shape is read from the failing checks of the formula: beside an edge check
    that returned a value it must not say "on every failing check"."""
    from autograder.scoring import shapes

    rows = [
        ({"args": [1.0], "kwargs": {}}, {"value": 1.0}, {"raised": "ValueError"}, 1e-6, 1e-9)
    ] * 2
    s = shapes.find_shape(rows, ["x"])
    assert s is not None and "on every failing check of the formula" in s.text, s


# -- nothing of the answer -----------------------------------------------------------------------


def _reference_line(a: str, word: str) -> str:
    """The line of ``a``'s reference solution cells that holds ``word``, as written there."""
    nb = notebook.read(notebook.source_path(a, ROOT))
    for _, _, src in notebook.code_cells(nb, {"solution"}):
        for line in src.splitlines():
            if word in line:
                return line.strip()
    raise AssertionError(f"no line with {word!r} in {a}'s solutions")


def test_a_learners_message_carrying_reference_source_is_cut_before_it_is_shown():
    """A learner's code that reached the reference source raises it, a piece per fixed case:
    the feedback shows the learner's words and "[…]" where the reference was."""
    a, name = "03_sum_vs_mean", "mean_sampled_log_ratio"
    body = _reference_line(a, "math.fsum(")
    assert len(body) > 40, body

    def learner(policy_logps, reference_logps):
        raise ValueError("look: " + body)

    ns = reference.namespace(a, ROOT)
    r = kernel.grade_function(a, name, learner, namespace=ns, root=ROOT)
    fixed = [c for c in r.cases if not c.hidden]
    assert fixed
    for c in fixed:
        msg = c.got.get("message", "")
        assert msg.startswith("look:") and redact.CUT in msg, msg
        assert body[: redact.REF_RUN] not in msg and "fsum(" not in msg, msg
    text = evaluate.feedback_text(r)
    assert body[: redact.REF_RUN] not in text, text


def test_a_learners_message_carrying_a_generated_value_is_cut():
    a = "01_exact_kl"
    value = 0.7318204471
    shown = redact.clean_message(f"p[0] is {value:.6f}, which I kept", a, [[[value, 0.2]]])
    assert f"{value:.6f}" not in shown and redact.CUT in shown, shown
    assert redact.clean_message("p[0] is 0.5", a, [[[value]]]) == "p[0] is 0.5"
    assert redact.clean_message("plain words", a, [[[value]]]) == "plain words"


def test_the_sorted_search_for_hidden_numbers_cuts_every_number_the_full_scan_cuts():
    """clean_message looks a number up among the hidden ones by bisection (once sorted per
    function): does it find every value, or negated value, that the scan of them all finds,
    at every number of digits and exponent, and nothing else?"""
    import random

    rng = random.Random(0)
    numbers = sorted(
        rng.choice([1, -1]) * rng.uniform(0, 1) * 10.0 ** rng.randint(-12, 12) for _ in range(300)
    ) + [0.0, 1e300, -2.5e-300]
    numbers.sort()
    texts = []
    for v in rng.sample(numbers, 120):
        for fmt in ("{:.2f}", "{:.4f}", "{:.8f}", "{:.3e}", "{:.6e}", "{:.3g}", "{:.12g}"):
            texts.append(fmt.format(v * rng.choice([1, -1, 1.0000001, 0.999])))
    texts += ["1e999", "123e400", "0.000", "nan", "7.77", "-0.00123", "100", "3.14159"]
    found = 0
    for t in texts:
        want = any(redact._rounds_from(t, v) for v in numbers)
        assert redact._matches_a_number(t, numbers) == want, t
        found += want
    assert 0 < found < len(texts), found  # both answers were tried


def test_a_message_with_a_number_beyond_a_floats_range_is_shown_not_a_grader_crash():
    """A learner's message holding 1.23e999 (10.0 ** 999 overflows): is it shown as written
    rather than stopping the scoring of the submission?"""
    a = "01_exact_kl"
    shown = redact.clean_message("p is 1.23e999 and 4.56e-999", a, [[[0.5, 0.25]]])
    assert shown == "p is 1.23e999 and 4.56e-999", shown


def test_the_json_a_learner_reads_holds_no_time_per_case():
    """A correct function that sleeps x seconds on input x would spell a generated input in
    its case's time: `drills check --json` (and the widget, which reads it) shows none."""
    a, name = "01_exact_kl", "forward_kl"
    ns = reference.namespace(a, ROOT)
    r = kernel.grade_function(a, name, ns[name], namespace=ns, root=ROOT)
    assert any(c.hidden for c in r.cases)
    learner = r.to_json(for_learner=True)
    assert all("seconds" not in c for c in learner["cases"]), learner["cases"][0]
    instructor = r.to_json(show_hidden=True)
    assert all("seconds" in c for c in instructor["cases"])
    assert not any(math.isnan(c["seconds"]) for c in instructor["cases"])


def test_a_mistake_whose_words_hold_on_every_input_is_not_named_where_one_check_contradicts_it():
    """lld_rate counting change <= -eps (eps read as a tolerance on the decrease): it agrees
    with "compared with 0 whatever eps is" on 3 of the 4 checks where that mistake fails (a
    coincidence of the data) and not on the 4th, and the line named it with "something else
    differs as well". A share compared with 0 is that share on every input: the mistake is
    marked exact, and a check where the learner's share is not the mistake's rules it out."""
    a = "05_grpo_lld"
    ns = reference.namespace(a, ROOT)
    ref = ns["lld_rate"]

    def lld_rate(changes, eps=0.0):
        ref(changes, eps)
        return float((changes <= -eps).float().mean())

    r = kernel.grade_function(a, "lld_rate", lld_rate, namespace=ns, root=ROOT)
    text = evaluate.feedback_text(r)
    assert r.score < r.points, text
    assert "eps-ignored" not in [d.id for d in r.diagnoses], text
    assert "whatever eps is" not in text, text
    (m,) = [m for m in assignments.get(a).function("lld_rate").mistakes if m.id == "eps-ignored"]
    assert m.exact
    # the learner who does compare with 0 is still told so
    r0 = kernel.grade_function(
        a,
        "lld_rate",
        lambda c, eps=0.0: (ref(c, eps), float((c <= 0).float().mean()))[1],
        namespace=ns,
        root=ROOT,
    )
    assert r0.diagnoses and r0.diagnoses[0].id == "eps-ignored", evaluate.feedback_text(r0)
