"""01_exact_kl: cases and known mistakes for log_ratios, forward_kl, reverse_kl.

Each mistake is one entry: its diagnosis and its wrong ``formula``, which runs
after the reference has validated the inputs (see spec.Mistake), so that it
differs from the reference in exactly the one way its diagnosis names. The
``unchecked`` mistakes are the reference with its input checks removed.
"""

from __future__ import annotations

import math

import numpy as np

from autograder.assignments import common as src
from autograder.assignments.common import cite, stabiliser_shows
from autograder.assignments.common import distribution_edge_cases as _edge_cases
from autograder.assignments.common import distribution_pair as _pair
from autograder.assignments.common import invalid_distribution_cases as _invalid_cases
from autograder.cases.spec import NO_SOURCE, AssignmentSpec, Case, FunctionSpec, Mistake

STORY = ([0.1, 0.9], [0.5, 0.5])  # policy, reference of the story


# -- the field's stabiliser, the same for everyone (common.stabiliser_shows) -------------------
# Each formula with eps added to the denominator of its log ratios, as the field's + 1e-6 and
# + 1e-8 write it; and, per generated case, whether a + 1e-6 shows beyond the tolerance on every
# draw (True) or on none (False): the side most draws of its size fall on, so that redrawing
# rarely takes more than a few tries.


def _stabilised_ratios(p, q, eps):
    return [math.log(a / (b + eps)) for a, b in zip(p, q)]


def _stabilised_kl(p, q, eps):
    """Σ over p_i > 0 of p_i · log(p_i / (q_i + eps)); math.inf when some q_i = 0 < p_i."""
    return _kl(math.log, eps=eps)(p, q)


def _stabilised_reverse_kl(p, q, eps):
    return _stabilised_kl(q, p, eps)


def _pair_holding(n, value, shows, zeros_p=0, zeros_q=0):
    """``distribution_pair`` whose every draw puts the field's + 1e-6 on the ``shows`` side."""
    return _pair(n, zeros_p, zeros_q, stabiliser_shows(value, shows))


RATIO_STABILISER_SHOWS = {2: False, 3: True, 5: True, 8: True}
KL_STABILISER_SHOWS = {2: False, 3: True, 4: True, 6: True, 10: True}


# -- log_ratios ------------------------------------------------------------------------------


def _ratios(log):
    return lambda policy, reference: [log(p / q) for p, q in zip(policy, reference)]


SMOOTHING = 1e-5  # the epsilon of PIQuIL/QuCumber#67
LOG_BASE_SOURCE = cite(src.FIELDTRIP_686, src.KANSA_71, src.SCIPY_ENTROPY)


LOG_RATIOS = FunctionSpec(
    "log_ratios",
    anchors={
        "story": (
            [-1.609438, 0.587787],
            "CURRICULUM 01: the sampled log ratios -1.609438, +0.587787",
        ),
        # log(0.25 / 0.75) = -log 3, log(0.75 / 0.25) = log 3
        "tuples": ([-math.log(3), math.log(3)], "by hand: ±log 3"),
        # log(0.2/0.4), log(0.3/0.4), log(0.5/0.2)
        "three-outcomes": ([math.log(1 / 2), math.log(3 / 4), math.log(5 / 2)], "by hand"),
    },
    cases=(
        Case("story", STORY, note="the story's pair: [-1.609438, 0.587787]"),
        Case("three-outcomes", ([0.2, 0.3, 0.5], [0.4, 0.4, 0.2]), note="three outcomes"),
        Case("tuples", ((0.25, 0.75), (0.75, 0.25)), note="tuples are sequences too"),
        Case("equal", ([0.3, 0.7], [0.3, 0.7]), note="equal distributions give zeros", kind="edge"),
        *[
            Case(
                f"random-{n}",
                make=_pair_holding(n, _stabilised_ratios, shows),
                note=f"random distributions over {n} outcomes",
            )
            for n, shows in RATIO_STABILISER_SHOWS.items()
        ],
        *_edge_cases(zeros=False),
        *_invalid_cases(zeros_invalid=True),
    ),
    mistakes=(
        Mistake(
            "log2",
            "you used log base 2; KL in RL code uses the natural log (math.log)",
            formula=_ratios(math.log2),
            source=LOG_BASE_SOURCE,
        ),
        Mistake(
            "log10",
            "you used log base 10; KL in RL code uses the natural log (math.log)",
            formula=_ratios(math.log10),
            source=NO_SOURCE,
        ),
        Mistake(
            "swapped",
            "you computed log(q_i / p_i): the arguments are swapped (policy first, reference second)",
            formula=lambda policy, reference: _ratios(math.log)(reference, policy),
            source=cite(src.ALPACA_FARM_67, src.SCHULMAN_BLOG),
        ),
        Mistake(
            "probs-as-logprobs",
            "you subtracted the probabilities, p_i − q_i, as if they were log probabilities: take the logs first, log(p_i) − log(q_i) = log(p_i / q_i)",
            formula=lambda policy, reference: [p - q for p, q in zip(policy, reference)],
            source=cite(src.PYTORCH_43348, src.LIGHTLY_1341),
        ),
        Mistake(
            "epsilon-smoothed",
            "you added a small epsilon to p_i and q_i inside the log: every log ratio is slightly off, and a zero no longer raises; use log(p_i / q_i) exactly and raise ValueError for a zero, where the log ratio is undefined",
            formula=lambda policy, reference: [
                math.log((p + SMOOTHING) / (q + SMOOTHING)) for p, q in zip(policy, reference)
            ],
            source=cite(src.QUCUMBER_67, src.XPSI_331),
        ),
        Mistake(
            "no-validation",
            "invalid inputs (empty, unequal lengths, entries outside [0, 1], not summing to 1, zeros) must raise ValueError",
            unchecked=True,
            source=cite(src.THE_ALGORITHMS_12233, src.SCIPY_ENTROPY),
        ),
    ),
)


# -- forward_kl and reverse_kl ---------------------------------------------------------------
# The formulas below take (p, q) in the order of the KL they compute: for forward_kl
# p = policy, q = reference; reverse_kl's mistakes call them through _reverse.


def _reverse(formula):
    return lambda policy, reference: formula(list(reference), list(policy))


def _unweighted(p, q):
    return math.fsum(math.log(a / b) for a, b in zip(p, q) if a > 0) / len(p)


def _weighted_by_other(p, q):
    return math.fsum(b * math.log(a / b) for a, b in zip(p, q) if a > 0 and b > 0)


def _kl(log, clamp=False, absolute=False, eps=0.0):
    """The reference's KL with another log (and, with ``clamp``, each log ratio clamped at 0;
    with ``absolute``, each log ratio's absolute value; with ``eps``, the field's stabiliser
    added to each q_i in the ratio: q_i + 0.0 is q_i exactly)."""

    def formula(p, q):
        terms = []
        for a, b in zip(p, q):
            if a == 0:
                continue
            if b == 0:
                return math.inf
            r = log(a / (b + eps))
            r = abs(r) if absolute else r
            terms.append(a * (max(0.0, r) if clamp else r))
        return math.fsum(terms)

    return formula


def _nan_zero_terms(p, q):
    pa, qa = np.asarray(p, float), np.asarray(q, float)
    return float(np.sum(pa * np.log(pa / qa)))


def _math_zero_terms(p, q):
    return math.fsum(a * math.log(a / b) for a, b in zip(p, q))


def _zero_clamped(p, q):
    """The KL with q_i clamped to 1e-6 (as uber/causalml#167 does): finite where q_i = 0 < p_i."""
    return math.fsum(a * math.log(a / max(b, 1e-6)) for a, b in zip(p, q) if a > 0)


def _kl_cases(story_note: str, value) -> tuple[Case, ...]:
    return (
        Case("story", STORY, note=story_note),
        Case("three-outcomes", ([0.2, 0.3, 0.5], [0.4, 0.4, 0.2]), note="three outcomes"),
        Case("skewed", ([0.7, 0.2, 0.1], [0.1, 0.3, 0.6]), note="both distributions skewed"),
        Case(
            "equal",
            ([0.25, 0.25, 0.5], [0.25, 0.25, 0.5]),
            note="equal distributions give 0",
            kind="edge",
        ),
        Case("tuples", ((0.25, 0.75), (0.75, 0.25)), note="tuples are sequences too"),
        *[
            Case(
                f"random-{n}",
                make=_pair_holding(n, value, shows),
                note=f"random distributions over {n} outcomes",
            )
            for n, shows in KL_STABILISER_SHOWS.items()
        ],
        *_edge_cases(),
    )


FORWARD_KL = FunctionSpec(
    "forward_kl",
    anchors={
        "story": (0.368064, "CURRICULUM 01: exact forward KL 0.368064"),
        # 0.25·log(1/3) + 0.75·log 3 = 0.5·log 3
        "tuples": (0.5 * math.log(3), "by hand: 0.5·log 3"),
        # p_1 = 0 drops out: 0.4·log(0.4/0.3) + 0.6·log(0.6/0.5)
        "policy-zero": (0.4 * math.log(4 / 3) + 0.6 * math.log(6 / 5), "by hand"),
        "reference-zero": (math.inf, "CURRICULUM 01: math.inf when some q_i = 0 < p_i"),
    },
    cases=(
        *_kl_cases("the story's pair: exact forward KL 0.368064", _stabilised_kl),
        Case(
            "policy-zero",
            ([0.0, 0.4, 0.6], [0.2, 0.3, 0.5]),
            note="a term with p_i = 0 contributes 0 (0·log 0 = 0)",
            kind="edge",
        ),
        Case(
            "random-policy-zeros",
            make=_pair_holding(5, _stabilised_kl, False, zeros_p=2),
            note="random pair where the policy has zeros",
            kind="edge",
        ),
        Case(
            "reference-zero",
            ([0.5, 0.5], [1.0, 0.0]),
            note="q_i = 0 < p_i: the KL is infinite (math.inf)",
            kind="edge",
        ),
        Case(
            "both-zero",
            ([0.0, 1.0], [0.0, 1.0]),
            note="p_i = q_i = 0 contributes 0",
            kind="edge",
        ),
        *_invalid_cases(),
    ),
    mistakes=(
        # indirect: the thread shows the confusion between the sampled log ratio and the weighted sum
        Mistake(
            "unweighted",
            "you took the unweighted average of the log ratios; the forward KL weights each log ratio by the policy's p_i",
            formula=_unweighted,
            source=src.MWP_REFT_40,
        ),
        Mistake(
            "weighted-by-reference",
            "you weighted the log ratios by the reference q_i; the forward KL takes the expectation under the policy p",
            formula=_weighted_by_other,
            source=NO_SOURCE,
        ),
        Mistake(
            "swapped",
            "your value is KL(reference ‖ policy): the arguments are swapped; forward_kl weights by the policy, Σ p_i · log(p_i / q_i)",
            formula=_reverse(_kl(math.log)),
            source=cite(src.PYTORCH_57459, src.ACER_6, src.XIHUAI_KL_ESTIMATORS),
        ),
        Mistake(
            "log2",
            "you used log base 2; use the natural log",
            formula=_kl(math.log2),
            source=LOG_BASE_SOURCE,
        ),
        Mistake(
            "log10",
            "you used log base 10; use the natural log",
            formula=_kl(math.log10),
            source=NO_SOURCE,
        ),
        Mistake(
            "zero-term-nan",
            "a term with p_i = 0 gave NaN (0 · log 0); such terms contribute exactly 0, skip them",
            formula=_nan_zero_terms,
            source=cite(
                src.THE_ALGORITHMS_12233,
                src.TORCHMETRICS_1029,
                src.DISTRIBUTIONS_JL_793,
                src.SCIPY_REL_ENTR,
            ),
        ),
        Mistake(
            "zero-term-error",
            "a term with p_i = 0 raised an error (log 0); such terms contribute exactly 0, skip them",
            formula=_math_zero_terms,
            source=cite(src.THE_ALGORITHMS_12233, src.SCIPY_REL_ENTR),
        ),
        Mistake(
            "reference-zero-finite",
            "where q_i = 0 < p_i you returned a finite number (q_i clamped to a small epsilon): the KL is infinite there, so return math.inf as soon as some q_i = 0 < p_i",
            formula=_zero_clamped,
            source=cite(src.LEAN_POOL_28, src.CAUSALML_167, src.TORCHMETRICS_1029),
        ),
        Mistake(
            "clamped",
            "you clamped each log ratio at 0 before averaging: that is the clipped expectation (0.529008 for the story's pair), not the KL",
            formula=_kl(math.log, clamp=True),
            source=src.ALPACA_FARM_67,
        ),
        Mistake(
            "abs-terms",
            "you took the absolute value of each log ratio, p_i · |log(p_i / q_i)|: the KL weights the signed log ratios, and the negative ones are what keep it small (0.368064 for the story's pair)",
            formula=_kl(math.log, absolute=True),
            source=NO_SOURCE,
        ),
        Mistake(
            "no-validation",
            "invalid inputs (empty, unequal lengths, entries outside [0, 1], not summing to 1) must raise ValueError",
            unchecked=True,
            source=src.SCIPY_ENTROPY,
        ),
    ),
)

REVERSE_KL = FunctionSpec(
    "reverse_kl",
    anchors={
        # 0.5·log(0.5/0.1) + 0.5·log(0.5/0.9) = 0.5·log(25/9) = log(5/3)
        "story": (math.log(5 / 3), "by hand: log(5/3) = 0.510826"),
        # 0.75·log 3 + 0.25·log(1/3) = 0.5·log 3
        "tuples": (0.5 * math.log(3), "by hand: 0.5·log 3"),
        "policy-zero": (math.inf, "CURRICULUM 01: math.inf, the roles of forward_kl swapped"),
    },
    cases=(
        *_kl_cases("the story's pair", _stabilised_reverse_kl),
        Case(
            "reference-zero",
            ([0.2, 0.3, 0.5], [0.0, 0.4, 0.6]),
            note="a term with q_i = 0 contributes 0",
            kind="edge",
        ),
        Case(
            "random-reference-zeros",
            make=_pair_holding(5, _stabilised_reverse_kl, False, zeros_q=2),
            note="random pair where the reference has zeros",
            kind="edge",
        ),
        Case(
            "policy-zero",
            ([1.0, 0.0], [0.5, 0.5]),
            note="p_i = 0 < q_i: the reverse KL is infinite (math.inf)",
            kind="edge",
        ),
        *_invalid_cases(),
    ),
    mistakes=(
        Mistake(
            "swapped",
            "your value is KL(policy ‖ reference), the forward KL: reverse_kl is KL(reference ‖ policy) = Σ q_i · log(q_i / p_i), weighted by the reference",
            formula=_kl(math.log),
            source=cite(src.XIHUAI_KL_ESTIMATORS, src.PYTORCH_57459),
        ),
        # indirect: the thread shows the confusion between the sampled log ratio and the weighted sum
        Mistake(
            "unweighted",
            "you took the unweighted average of the log ratios; the reverse KL weights by the reference's q_i",
            formula=_reverse(_unweighted),
            source=src.MWP_REFT_40,
        ),
        Mistake(
            "weighted-by-policy",
            "you weighted by the policy p_i; the reverse KL takes the expectation under the reference q",
            formula=_reverse(_weighted_by_other),
            source=NO_SOURCE,
        ),
        Mistake(
            "log2",
            "you used log base 2; use the natural log",
            formula=_reverse(_kl(math.log2)),
            source=LOG_BASE_SOURCE,
        ),
        Mistake(
            "zero-term-nan",
            "a term with q_i = 0 gave NaN (0 · log 0); such terms contribute exactly 0, skip them",
            formula=_reverse(_nan_zero_terms),
            source=cite(src.TORCHMETRICS_1029, src.DISTRIBUTIONS_JL_793, src.SCIPY_REL_ENTR),
        ),
        Mistake(
            "zero-term-error",
            "a term with q_i = 0 raised an error (log 0); such terms contribute exactly 0, skip them",
            formula=_reverse(_math_zero_terms),
            source=cite(src.THE_ALGORITHMS_12233, src.SCIPY_REL_ENTR),
        ),
        Mistake(
            "policy-zero-finite",
            "where p_i = 0 < q_i you returned a finite number (p_i clamped to a small epsilon): the reverse KL is infinite there, so return math.inf as soon as some p_i = 0 < q_i",
            formula=_reverse(_zero_clamped),
            source=cite(src.LEAN_POOL_28, src.CAUSALML_167, src.TORCHMETRICS_1029),
        ),
        Mistake(
            "clamped",
            "you clamped each log ratio log(q_i / p_i) at 0 before weighting: the KL weights the signed log ratios, negative ones included (0.510826 for the story's pair, not 0.804719)",
            formula=_reverse(_kl(math.log, clamp=True)),
            source=src.ALPACA_FARM_67,
        ),
        Mistake(
            "abs-terms",
            "you took the absolute value of each log ratio, q_i · |log(q_i / p_i)|: the reverse KL weights the signed log ratios, negative ones included (0.510826 for the story's pair)",
            formula=_reverse(_kl(math.log, absolute=True)),
            source=NO_SOURCE,
        ),
        Mistake(
            "no-validation",
            "invalid inputs (empty, unequal lengths, entries outside [0, 1], not summing to 1) must raise ValueError",
            unchecked=True,
            source=src.SCIPY_ENTROPY,
        ),
    ),
)

SPEC = AssignmentSpec("01_exact_kl", (LOG_RATIOS, FORWARD_KL, REVERSE_KL))
