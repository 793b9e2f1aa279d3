"""01_exact_kl: cases and known mistakes for log_ratios, forward_kl, reverse_kl.

Mutants reuse the reference for validation (they call it first so that it
raises on invalid input) and then compute the wrong value: each differs from
the reference in exactly one way, the way its diagnosis names.
"""

from __future__ import annotations

import math

import numpy as np

from autograder.assignments.common import distribution_pair as _pair
from autograder.spec import AssignmentSpec, Case, FunctionSpec, Mistake

STORY = ([0.1, 0.9], [0.5, 0.5])  # policy, reference of the story


def _invalid_cases(zero_is_invalid: bool) -> list[Case]:
    cases = [
        Case("empty", ([], []), raises=ValueError, note="empty distributions raise ValueError"),
        Case(
            "unequal-lengths",
            ([0.5, 0.5], [0.2, 0.3, 0.5]),
            raises=ValueError,
            note="unequal lengths raise ValueError",
        ),
        Case(
            "negative-entry",
            ([1.2, -0.2], [0.5, 0.5]),
            raises=ValueError,
            note="a negative probability raises ValueError",
        ),
        Case(
            "entry-above-one",
            ([0.5, 0.5], [1.5, -0.5]),
            raises=ValueError,
            note="a probability above 1 raises ValueError",
        ),
        Case(
            "nan-entry",
            ([float("nan"), 0.5], [0.5, 0.5]),
            raises=ValueError,
            note="NaN raises ValueError",
        ),
        Case(
            "not-normalized",
            ([0.3, 0.3], [0.5, 0.5]),
            raises=ValueError,
            note="a policy not summing to 1 raises ValueError",
        ),
        Case(
            "reference-not-normalized",
            ([0.5, 0.5], [0.6, 0.6]),
            raises=ValueError,
            note="a reference not summing to 1 raises ValueError",
        ),
    ]
    if zero_is_invalid:
        cases += [
            Case(
                "zero-in-policy",
                ([0.0, 1.0], [0.5, 0.5]),
                raises=ValueError,
                note="p_i = 0: the log ratio is undefined",
            ),
            Case(
                "zero-in-reference",
                ([0.5, 0.5], [1.0, 0.0]),
                raises=ValueError,
                note="q_i = 0: the log ratio is undefined",
            ),
        ]
    return cases


# -- log_ratios ------------------------------------------------------------------------------


def _wrong_log(log):
    def build(ns):
        def mutant(policy, reference):
            ns["log_ratios"](policy, reference)  # validation as in the reference
            return [log(p / q) for p, q in zip(policy, reference)]

        return mutant

    return build


def _log_ratios_swapped(ns):
    def mutant(policy, reference):
        ns["log_ratios"](policy, reference)
        return [math.log(q / p) for p, q in zip(policy, reference)]

    return mutant


def _log_ratios_unchecked(ns):
    def mutant(policy, reference):
        return [float(np.log(np.float64(p) / q)) for p, q in zip(policy, reference)]

    return mutant


LOG_RATIOS = FunctionSpec(
    "log_ratios",
    cases=(
        Case("story", STORY, note="the story's pair: [-1.609438, 0.587787]"),
        Case("three-outcomes", ([0.2, 0.3, 0.5], [0.4, 0.4, 0.2]), note="three outcomes"),
        Case("tuples", ((0.25, 0.75), (0.75, 0.25)), note="tuples are sequences too"),
        Case("equal", ([0.3, 0.7], [0.3, 0.7]), note="equal distributions give zeros"),
        *[
            Case(f"random-{n}", make=_pair(n), note=f"random distributions over {n} outcomes")
            for n in (2, 3, 5, 8)
        ],
        *_invalid_cases(zero_is_invalid=True),
    ),
    mistakes=(
        Mistake(
            "log2",
            "you used log base 2; KL in RL code uses the natural log (math.log)",
            _wrong_log(math.log2),
        ),
        Mistake(
            "log10",
            "you used log base 10; KL in RL code uses the natural log (math.log)",
            _wrong_log(math.log10),
        ),
        Mistake(
            "swapped",
            "you computed log(q_i / p_i): the arguments are swapped (policy first, reference second)",
            _log_ratios_swapped,
        ),
        Mistake(
            "no-validation",
            "invalid inputs (empty, unequal lengths, entries outside [0, 1], not summing to 1, zeros) must raise ValueError",
            _log_ratios_unchecked,
        ),
    ),
)


# -- forward_kl and reverse_kl ---------------------------------------------------------------


def _kl_mutant(own: str, formula):
    """A mutant of ``own`` (forward_kl or reverse_kl): validate like the reference, then ``formula``.

    ``formula(p, q)`` sees the distributions in the order of the KL it computes:
    for forward_kl p = policy, q = reference; for reverse_kl the roles swap.
    """

    def build(ns):
        def mutant(policy, reference):
            ns[own](policy, reference)
            p, q = (policy, reference) if own == "forward_kl" else (reference, policy)
            return formula(list(p), list(q))

        return mutant

    return build


def _unweighted(p, q):
    return math.fsum(math.log(a / b) for a, b in zip(p, q) if a > 0) / len(p)


def _weighted_by_other(p, q):
    return math.fsum(b * math.log(a / b) for a, b in zip(p, q) if a > 0 and b > 0)


def _base(log):
    def formula(p, q):
        total = 0.0
        for a, b in zip(p, q):
            if a == 0:
                continue
            if b == 0:
                return math.inf
            total += a * log(a / b)
        return total

    return formula


def _nan_zero_terms(p, q):
    pa, qa = np.asarray(p, float), np.asarray(q, float)
    return float(np.sum(pa * np.log(pa / qa)))


def _math_zero_terms(p, q):
    return math.fsum(a * math.log(a / b) for a, b in zip(p, q))


def _clamped(p, q):
    return math.fsum(a * max(0.0, math.log(a / b)) for a, b in zip(p, q) if a > 0)


def _unchecked(p, q):
    with np.errstate(all="ignore"):
        pa, qa = np.asarray(p, float), np.asarray(q, float)
        terms = np.where(pa > 0, pa * np.log(np.where(pa > 0, pa, 1.0) / qa), 0.0)
        return float(np.sum(terms))


def _kl_cases(zeros_note: str) -> tuple[Case, ...]:
    return (
        Case(
            "story",
            STORY,
            note="the story's pair: exact forward KL 0.368064"
            if zeros_note == "forward"
            else "the story's pair",
        ),
        Case("three-outcomes", ([0.2, 0.3, 0.5], [0.4, 0.4, 0.2]), note="three outcomes"),
        Case("skewed", ([0.7, 0.2, 0.1], [0.1, 0.3, 0.6]), note="both distributions skewed"),
        Case("equal", ([0.25, 0.25, 0.5], [0.25, 0.25, 0.5]), note="equal distributions give 0"),
        Case("tuples", ((0.25, 0.75), (0.75, 0.25)), note="tuples are sequences too"),
        *[
            Case(f"random-{n}", make=_pair(n), note=f"random distributions over {n} outcomes")
            for n in (2, 3, 4, 6, 10)
        ],
    )


FORWARD_KL = FunctionSpec(
    "forward_kl",
    cases=(
        *_kl_cases("forward"),
        Case(
            "policy-zero",
            ([0.0, 0.4, 0.6], [0.2, 0.3, 0.5]),
            note="a term with p_i = 0 contributes 0 (0·log 0 = 0)",
        ),
        Case(
            "random-policy-zeros",
            make=_pair(5, zeros_p=2),
            note="random pair where the policy has zeros",
        ),
        Case(
            "reference-zero",
            ([0.5, 0.5], [1.0, 0.0]),
            note="q_i = 0 < p_i: the KL is infinite (math.inf)",
        ),
        Case("both-zero", ([0.0, 1.0], [0.0, 1.0]), note="p_i = q_i = 0 contributes 0"),
        *_invalid_cases(zero_is_invalid=False),
    ),
    mistakes=(
        Mistake(
            "unweighted",
            "you took the unweighted average of the log ratios; the forward KL weights each log ratio by the policy's p_i",
            _kl_mutant("forward_kl", _unweighted),
        ),
        Mistake(
            "weighted-by-reference",
            "you weighted the log ratios by the reference q_i; the forward KL takes the expectation under the policy p",
            _kl_mutant("forward_kl", _weighted_by_other),
        ),
        Mistake(
            "swapped",
            "your value is KL(reference ‖ policy): the arguments are swapped",
            _kl_mutant("reverse_kl", _base(math.log)),
        ),
        Mistake(
            "log2",
            "you used log base 2; use the natural log",
            _kl_mutant("forward_kl", _base(math.log2)),
        ),
        Mistake(
            "log10",
            "you used log base 10; use the natural log",
            _kl_mutant("forward_kl", _base(math.log10)),
        ),
        Mistake(
            "zero-term-nan",
            "a term with p_i = 0 gave NaN (0 · log 0); such terms contribute exactly 0, skip them",
            _kl_mutant("forward_kl", _nan_zero_terms),
        ),
        Mistake(
            "zero-term-error",
            "a term with p_i = 0 raised an error (log 0); such terms contribute exactly 0, skip them",
            _kl_mutant("forward_kl", _math_zero_terms),
        ),
        Mistake(
            "clamped",
            "you clamped each log ratio at 0 before averaging: that is the clipped expectation (0.529008 for the story's pair), not the KL",
            _kl_mutant("forward_kl", _clamped),
        ),
        Mistake(
            "no-validation",
            "invalid inputs (empty, unequal lengths, entries outside [0, 1], not summing to 1) must raise ValueError",
            lambda ns: _unchecked,
        ),
    ),
)

REVERSE_KL = FunctionSpec(
    "reverse_kl",
    cases=(
        *_kl_cases("reverse"),
        Case(
            "reference-zero",
            ([0.2, 0.3, 0.5], [0.0, 0.4, 0.6]),
            note="a term with q_i = 0 contributes 0",
        ),
        Case(
            "random-reference-zeros",
            make=_pair(5, zeros_q=2),
            note="random pair where the reference has zeros",
        ),
        Case(
            "policy-zero",
            ([1.0, 0.0], [0.5, 0.5]),
            note="p_i = 0 < q_i: the reverse KL is infinite (math.inf)",
        ),
        *_invalid_cases(zero_is_invalid=False),
    ),
    mistakes=(
        Mistake(
            "swapped",
            "your value is KL(policy ‖ reference), the forward KL: reverse_kl is KL(reference ‖ policy)",
            _kl_mutant("forward_kl", _base(math.log)),
        ),
        Mistake(
            "unweighted",
            "you took the unweighted average of the log ratios; the reverse KL weights by the reference's q_i",
            _kl_mutant("reverse_kl", _unweighted),
        ),
        Mistake(
            "weighted-by-policy",
            "you weighted by the policy p_i; the reverse KL takes the expectation under the reference q",
            _kl_mutant("reverse_kl", _weighted_by_other),
        ),
        Mistake(
            "log2",
            "you used log base 2; use the natural log",
            _kl_mutant("reverse_kl", _base(math.log2)),
        ),
        Mistake(
            "zero-term-nan",
            "a term with q_i = 0 gave NaN (0 · log 0); such terms contribute exactly 0, skip them",
            _kl_mutant("reverse_kl", _nan_zero_terms),
        ),
        Mistake(
            "zero-term-error",
            "a term with q_i = 0 raised an error (log 0); such terms contribute exactly 0, skip them",
            _kl_mutant("reverse_kl", _math_zero_terms),
        ),
        Mistake(
            "no-validation",
            "invalid inputs (empty, unequal lengths, entries outside [0, 1], not summing to 1) must raise ValueError",
            lambda ns: lambda p, q: _unchecked(q, p),
        ),
    ),
)

SPEC = AssignmentSpec("01_exact_kl", (LOG_RATIOS, FORWARD_KL, REVERSE_KL))
