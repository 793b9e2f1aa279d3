"""Running the cases of a graded function, scoring, and recognising known mistakes.

The pipeline, in order (each step works on encoded values, see codec):

    materialize   case inputs, fixed or generated from the seed
    reference     expected outcomes: the source notebook's solution on those inputs
    learner       the learner's outcomes (in the kernel, or in the sandboxed child)
    score         verdict per case; score = points x Σ_kind share x weighted fraction passed
                  within the kind, 2 decimals (kinds and shares: see spec)
    diagnose      the catalogued mistakes the learner's outcomes match: conceptual first,
                  validation second, an error shape (autograder.scoring.shapes) when no mistake fits
"""

from __future__ import annotations

import contextlib
import copy
import io
import math
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from autograder.cases import seeds
from autograder.cases.codec import encode, outcome_of, served_callees
from autograder.cases.compare import render_outcome, render_pair, same_outcome
from autograder.cases.spec import KIND_LABELS, KINDS, Case, FunctionSpec, Mistake
from autograder.notebooks import reference
from autograder.scoring import served, shapes

_LEAVES = (str, int, float, bool, type(None))


def plain(x: Any) -> Any:
    """What ``dataclasses.asdict`` gives (dataclasses to dicts, containers copied, so the
    result shares nothing mutable with ``x``), about 4x faster on results, whose cases hold
    encoded values: nested dicts and lists of plain leaves."""
    if isinstance(x, _LEAVES):
        return x
    if isinstance(x, dict):
        return {plain(k): plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [plain(v) for v in x]
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return tuple(plain(v) for v in x)
    if is_dataclass(x) and not isinstance(x, type):
        return {f.name: plain(getattr(x, f.name)) for f in fields(x)}
    return copy.deepcopy(x)


@dataclass
class CaseResult:
    id: str
    passed: bool
    weight: float
    hidden: bool
    note: str
    expected: dict
    got: dict
    seconds: float = 0.0
    inputs: dict | None = None  # encoded args/kwargs (shown for public cases only)
    kind: str = "value"  # "value" | "edge" | "invalid" (see spec)
    # The learner's code had been called on a generated input before this case, in the same
    # process: what it returned or raised here may carry that input (kept in a global), so
    # even for a fixed case feedback does not show it (see render_values), unless public data
    # explains the value (a known mistake's, NaN, inf, None: see _show_explained).
    after_generated: bool = False


@dataclass
class KindScore:
    """Points of one kind of case: e.g. input checks 0 / 0.45 (0 of 7 passed)."""

    kind: str
    label: str  # "the formula", "edge cases", "input checks"
    share: int  # percent of the function's points
    points: float
    score: float
    passed: int
    cases: int


@dataclass
class Diagnosis:
    """One line of feedback: a catalogued mistake ("concept" or "validation") or an error shape."""

    id: str  # a mistake id, or "shape:<name>"
    text: str  # what a learner may read: nothing of a generated case (see shapes)
    kind: str  # "concept" | "validation" | "shape"
    points: float  # the points lost on the cases it explains
    detail: str = ""  # the text with the generated cases' specifics: --show-hidden only


@dataclass
class FunctionResult:
    assignment: str
    function: str
    points: float
    score: float
    fraction: float
    attempted: bool
    cases: list[CaseResult] = field(default_factory=list)
    mistake: str | None = None  # id of the first diagnosis (kept for report, widgets, tests)
    diagnosis: str | None = None  # its text
    error: str | None = None  # the whole function could not be graded (missing, crashed run)
    diagnoses: list[Diagnosis] = field(default_factory=list)  # at most 3, the first shown first
    kinds: list[KindScore] = field(default_factory=list)  # points per kind of case
    note: str = ""  # how it was graded, when that needs saying (reference callees)

    @property
    def passed(self) -> int:
        return sum(c.passed for c in self.cases)

    def to_json(self, show_hidden: bool = False, for_learner: bool = False) -> dict:
        """Plain JSON. Generated cases lose their inputs unless ``show_hidden``; for a learner
        (``for_learner``) they also lose their expected and computed values (the learner's
        exception message included) and the diagnoses their details (replay guard)."""
        d = plain(self)
        for c in d["cases"]:
            if c["hidden"] and not show_hidden:
                c["inputs"] = None
                if for_learner:
                    c["expected"] = c["got"] = None
            if for_learner and c.get("after_generated") and not show_hidden:
                c["got"] = None
        if for_learner and not show_hidden:
            for diag in d["diagnoses"]:
                diag["detail"] = ""
        return d


# -- materialize -------------------------------------------------------------------------------


def materialize(assignment: str, fspec: FunctionSpec, secret: str, student: str | None = None):
    """Encoded inputs of every case: [{"id", "args", "kwargs"}], plus "serve" on a case where
    the reference calls other functions of the notebook (their outcomes, by value: see
    :mod:`autograder.scoring.served`)."""
    out = []
    for case in fspec.cases:
        if case.make is not None:
            rng = seeds.case_rng(secret, assignment, f"{fspec.name}/{case.id}", student)
            args = tuple(case.make(rng))
        else:
            args = case.args
        out.append({"id": case.id, "args": encode(list(args)), "kwargs": encode(dict(case.kwargs))})
    served.attach(assignment, fspec.name, out)
    return out


def callee_note(inputs: list[dict], assignment: str = "", function: str = "") -> str:
    """What the feedback says when a function was graded with reference (served) graded callees."""
    if not assignment or not any(inp.get("serve") for inp in inputs):
        return ""
    return served.note(assignment, function)


# -- running functions -------------------------------------------------------------------------


@contextlib.contextmanager
def silenced():
    """No warnings and no stderr: under nbgrader any stderr output scores the cell 0."""
    import numpy as np

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        with contextlib.redirect_stderr(io.StringIO()):
            yield


def run_cases(
    fn, inputs: list[dict], namespace: dict, serve: bool = True
) -> tuple[list[dict], list[float]]:
    """Outcomes and seconds of ``fn`` on every case (inputs decoded afresh for each call); the
    callees a case serves (``inp["serve"]``, see :mod:`autograder.scoring.served`) answer
    from their table while ``fn`` runs, unless ``serve`` is False (the reference and its
    mutants, which call the reference's own callees, or their own variants of them)."""
    outcomes, times = [], []
    with silenced():
        for inp in inputs:
            t0 = time.perf_counter()
            with served_callees(namespace, inp.get("serve") if serve else None):
                outcomes.append(outcome_of(fn, inp["args"], inp["kwargs"], namespace))
            times.append(time.perf_counter() - t0)
    return outcomes, times


def reference_run(assignment: str, name: str, inputs, root: Path | None = None) -> list[dict]:
    """The reference ``name``'s outcomes on ``inputs``, computed (memoised by
    :func:`autograder.scoring.memo.reference_outcomes`)."""
    ns = reference.namespace(assignment, root)
    return run_cases(ns[name], inputs, ns, serve=False)[0]


def mistakes_run(
    assignment: str, fspec: FunctionSpec, inputs, root: Path | None = None
) -> dict[str, list[dict]]:
    """Every catalogued mistake's outcomes on ``inputs``, computed (memoised by
    :func:`autograder.scoring.memo.mistake_outcomes`)."""
    ns = reference.namespace(assignment, root)
    return {m.id: run_cases(m.build(ns), inputs, ns, serve=False)[0] for m in fspec.mistakes}


# -- scoring and diagnosis ---------------------------------------------------------------------


def case_points(fspec: FunctionSpec, points: float) -> list[float]:
    """What each case is worth: its kind's share of ``points``, shared by weight within the kind."""
    totals = {k: sum(c.weight for c in fspec.cases if c.kind == k) for k in KINDS}
    return [
        points * fspec.split.share(c.kind) / 100 * c.weight / totals[c.kind] for c in fspec.cases
    ]


def weighted_fraction(fspec: FunctionSpec, passed: list[bool]) -> float:
    """Σ over kinds of share × (weighted fraction of the kind's cases passed); 1.0 exactly when all pass."""
    total = 0.0
    for k in KINDS:
        idx = fspec.of_kind(k)
        if not idx:
            continue
        w = sum(fspec.cases[i].weight for i in idx)
        got = sum(fspec.cases[i].weight for i in idx if passed[i])
        total += fspec.split.share(k) * got / w
    return total / 100


def kind_scores(fspec: FunctionSpec, points: float, passed: list[bool]) -> list[KindScore]:
    worth = case_points(fspec, points)
    out = []
    for k in KINDS:
        idx = fspec.of_kind(k)
        if not idx:
            continue
        out.append(
            KindScore(
                kind=k,
                label=KIND_LABELS[k],
                share=fspec.split.share(k),
                points=round(sum(worth[i] for i in idx), 2),
                score=round(sum(worth[i] for i in idx if passed[i]), 2),
                passed=sum(1 for i in idx if passed[i]),
                cases=len(idx),
            )
        )
    return out


def _equal_for_matching(case: Case, a: dict, b: dict) -> bool:
    """Do two wrong outcomes look like the same mistake on this case?"""
    if "raised" in a and "raised" in b:
        return a["raised"] == b["raised"]
    return same_outcome(a, b, case.rtol, case.atol) and same_outcome(b, a, case.rtol, case.atol)


def _missed_error(case: Case, expected: dict, got: dict) -> bool:
    """The case wanted an error and the outcome is something else (value or another error)."""
    return "raised" in expected and got.get("raised") != expected["raised"]


def _agrees(case: Case, expected: dict, mo: dict, got: dict) -> bool:
    if _missed_error(case, expected, mo) and _missed_error(case, expected, got):
        return True
    return _equal_for_matching(case, mo, got)


# The mistake and one other small difference: the learner's values within 2 % of the mistake's.
NEAR_RTOL = 2e-2
NEAR_ATOL = 1e-4
SOMETHING_ELSE = (
    " Your outputs match this mistake only approximately or only on some checks: something "
    "else differs as well."
)


def _agrees_loosely(m: Mistake, expected: dict, mo: dict, got: dict) -> bool:
    if "raised" in expected or "raised" in mo or "raised" in got:
        return mo.get("raised") == got.get("raised")
    if same_outcome(mo, got, NEAR_RTOL, NEAR_ATOL) and same_outcome(got, mo, NEAR_RTOL, NEAR_ATOL):
        return True
    return _clamp_consistent(m, expected, got)


def _clamp_consistent(m: Mistake, expected: dict, got: dict) -> bool:
    """Are the learner's values the expected ones clamped at one bound, as mistake ``m``
    clamps (at whatever constant)?"""
    if m.bound is None or not m.bound_of or "value" not in got or "value" not in expected:
        return False
    from autograder.cases.compare import numeric
    from autograder.cases.spec import BOUND_INVERSES, BOUND_SATURATIONS

    ne, ng = numeric(expected.get("value")), numeric(got.get("value"))
    if ne is None or ng is None or ne[0] != ng[0]:
        return False
    differ = [abs(g) for e, g in zip(ne[1], ng[1]) if abs(g - e) > 1e-9 * max(1.0, abs(e))]
    if not differ or not all(math.isfinite(v) for v in differ):
        return False
    if any(abs(g) > abs(e) * (1 + 1e-9) for e, g in zip(ne[1], ng[1])):
        return False  # a clamp only shrinks
    c = BOUND_INVERSES[m.bound_of](max(differ))
    sat = BOUND_SATURATIONS[m.bound_of](c)
    return all(any(abs(v - s) <= 1e-6 * max(1.0, s) for s in sat) for v in differ)


def _bound_text(m: Mistake, fspec: FunctionSpec, idx, expected, got) -> str:
    """The mistake's diagnosis with the bound the learner clamped at (read from their own
    values on fixed cases where they differ from the expected ones), when it can be read."""
    if m.bound is None or not m.bound_of:
        return m.diagnosis
    from autograder.cases.compare import numeric
    from autograder.cases.spec import BOUND_INVERSES

    vals = []
    for i in idx:
        if fspec.cases[i].hidden:
            continue  # a value of the learner on a generated input is never shown
        ne, ng = numeric(expected[i].get("value")), numeric(got[i].get("value"))
        if ne is None or ng is None or ne[0] != ng[0]:
            continue
        c = fspec.cases[i]
        vals += [abs(g) for e, g in zip(ne[1], ng[1]) if abs(g - e) > c.atol + c.rtol * abs(e)]
    if not vals or not all(v == v and v != float("inf") for v in vals):
        return m.diagnosis
    learner = BOUND_INVERSES[m.bound_of](max(vals))
    if abs(learner - m.bound) <= 1e-3 * abs(m.bound):
        return m.diagnosis
    shown = f"{learner:.4g}"
    return m.diagnosis.replace(f"{m.bound:g}", shown)


def _match(
    fspec: FunctionSpec,
    among: list[int],
    failed: set[int],
    expected: list[dict],
    got: list[dict],
    mutants: Mapping[str, list[dict]],
    candidates: list[tuple[int, Mistake]],
    most: int,
    full_match_suffices: bool = False,
    loose: bool = False,
) -> list[tuple[Mistake, set[int]]]:
    """Catalogued mistakes that explain the learner's failures among the cases ``among``.

    ``loose``: the second pass when nothing matched: "the same way" means within
    NEAR_RTOL / NEAR_ATOL (the mistake and one other small difference), and for a mistake
    with a ``bound`` (a clamp), failing the same cases with values no larger than expected
    (the same clamp at another bound).

    A mistake matches when, on the cases of ``among`` where it fails, the learner
    fails the same way (same value within tolerance, or, on a case that should
    raise, also fails to raise) on at least half of them, and it explains at least
    half of the learner's failures not yet explained (or, with ``full_match_suffices``,
    the learner reproduces all of its failures: independent missing checks). The full
    match failing the most cases wins (the most specific); then the next on what is left.
    """
    remaining = set(failed) & set(among)
    chosen: list[tuple[Mistake, set[int]]] = []
    while remaining and len(chosen) < most:
        best = None
        for order, m in candidates:
            if any(m is c for c, _ in chosen):
                continue
            mo = mutants[m.id]
            m_failed = [
                i
                for i in among
                if not same_outcome(expected[i], mo[i], fspec.cases[i].rtol, fspec.cases[i].atol)
            ]
            if not m_failed:
                continue
            if loose:
                agree = {
                    i for i in m_failed if _agrees_loosely(m, expected[i], mo[i], got[i])
                } & set(failed)
            else:
                agree = {i for i in m_failed if _agrees(fspec.cases[i], expected[i], mo[i], got[i])}
            own = len(agree) / len(m_failed)
            explained = len(agree & remaining) / len(remaining)
            if loose:  # the mistake's own failures, nearly all reproduced; the rest is "else"
                if not (own == 1.0 and explained > 0 or own >= 0.75 and explained >= 0.2):
                    continue
            elif own < 0.5 or (explained < 0.5 and not (full_match_suffices and own == 1.0)):
                continue
            rank = (own, len(m_failed) if own == 1.0 else len(agree), -order)
            if best is None or rank > best[0]:
                best = (rank, m, agree & remaining)
        if best is None:
            break
        chosen.append((best[1], best[2]))
        remaining -= best[2]
    return chosen


# A near miss: every value within NEAR_MISS_FACTOR times the stated tolerance of the expected
# one (and at least one outside it). Each catalogued mistake differs from the reference by far
# more on the cases that catch it (tests/test_field_maths.py); a stabiliser, float32 or
# a clamp at a tiny bound lands here.
NEAR_MISS_FACTOR = 100.0
NEAR_MISS_CAUSES = (
    "look for an epsilon (a stabiliser the formula does not have, or a larger one), float32 "
    "(or float16) arithmetic where float64 is needed, or a clamp"
)


@dataclass
class NearMiss:
    cases: list[int]  # the failed cases that are near misses
    error: float  # the worst case's error: relative, or absolute when ``relative`` is False
    tolerance: float  # what the tolerance allows there, in the same terms
    relative: bool
    rtol: float  # the stated tolerance of the worst case
    atol: float


def _excess(case: Case, expected: dict, got: dict) -> tuple[float, float, float, bool, Case] | None:
    """(how many times the tolerance, error, tolerance, relative?) of the worst value of a
    failed case whose values all have the expected shape and are finite where the expected
    ones are; None otherwise (an exception, a shape, NaN or inf where a number belongs)."""
    from autograder.cases.compare import numeric

    if "value" not in expected or "value" not in got:
        return None
    ne, ng = numeric(expected["value"]), numeric(got["value"])
    if ne is None or ng is None or ne[0] != ng[0]:
        return None
    worst = (0.0, 0.0, 0.0, True, case)
    for e, g in zip(ne[1], ng[1]):
        if not math.isfinite(e) or not math.isfinite(g):
            if e == g or (math.isnan(e) and math.isnan(g)):
                continue
            return None
        err = abs(g - e)
        allowed = case.atol + case.rtol * abs(e)
        if allowed <= 0:
            return None
        ratio = err / allowed
        if ratio > worst[0]:
            relative = case.rtol * abs(e) >= case.atol
            worst = (
                ratio,
                err / abs(e) if relative else err,
                (allowed / abs(e)) if relative else allowed,
                relative,
                case,
            )
    return worst


def near_miss(fspec: FunctionSpec, failed: list[int], expected, got) -> NearMiss | None:
    """The failed cases of ``failed`` that miss by at most NEAR_MISS_FACTOR times the stated
    tolerance, with the worst error among them; None when there are none."""
    near, worst = [], None
    for i in failed:
        ex = _excess(fspec.cases[i], expected[i], got[i])
        if ex is None or not 1.0 < ex[0] <= NEAR_MISS_FACTOR:
            continue
        near.append(i)
        if worst is None or ex[0] > worst[0]:
            worst = ex
    if not near or worst is None:
        return None
    return NearMiss(near, worst[1], worst[2], worst[3], worst[4].rtol, worst[4].atol)


def near_miss_text(nm: NearMiss, failed: int, others: list[str] = ()) -> str:
    """The near miss in words: how far, against what, and where to look; nothing of a
    generated case but the size of the error. ``others``: the ids of the failed checks that
    are not near misses (named, so that a learner looks at them too)."""
    what = "relative error" if nm.relative else "error (the expected value is near 0)"
    where = (
        "your values are close to the expected ones but outside the stated tolerance"
        if len(nm.cases) == failed
        else f"on {len(nm.cases)} of the {failed} failed checks your values are close to the "
        "expected ones but outside the stated tolerance"
    )
    return (
        f"A near miss: {where} (|yours − expected| ≤ {nm.atol:g} + {nm.rtol:g} · |expected|). "
        f"The largest {what} is {nm.error:.2g}, against a tolerance of {nm.tolerance:.2g} "
        f"there: {NEAR_MISS_CAUSES}."
    ) + (
        f" The other failed {'check is' if len(others) == 1 else 'checks are'} further off: "
        + ", ".join(others[:3])
        + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        + "."
        if others
        else ""
    )


def diagnose_all(
    fspec: FunctionSpec,
    points: float,
    inputs: list[dict],
    expected: list[dict],
    got: list[dict],
    mutants: Mapping[str, list[dict]],
    arg_names: list[str] | tuple[str, ...] = (),
    tainted: list[bool] | None = None,
) -> list[Diagnosis]:
    """At most three diagnoses, the conceptual ones first, each group ordered by the points it costs.

    Value and edge failures are matched against the conceptual mistakes; when none
    matches, an error shape of the failing value cases may be named (autograder.scoring.shapes).
    Invalid-input failures are matched against the validation mistakes, and shown
    only after a conceptual diagnosis, or alone when every value and edge case passes:
    a learner whose formula is wrong hears about the formula first, or nothing.
    ``tainted[i]``: case i's outcome may carry a generated input (a generated case, or one
    run after one); an error shape on such cases names nothing of them (see shapes).
    """
    worth = case_points(fspec, points)
    failed = {
        i
        for i, c in enumerate(fspec.cases)
        if not same_outcome(expected[i], got[i], c.rtol, c.atol)
    }
    if not failed:
        return []
    concept_cases = [i for i, c in enumerate(fspec.cases) if c.kind != "invalid"]
    invalid_cases = fspec.of_kind("invalid")
    concept = [(o, m) for o, m in enumerate(fspec.mistakes) if not m.validation]
    validation = [(o, m) for o, m in enumerate(fspec.mistakes) if m.validation]

    def cost(idx) -> float:
        return round(sum(worth[i] for i in idx), 2)

    matched = _match(fspec, concept_cases, failed, expected, got, mutants, concept, 2)
    concept_failed = failed & set(concept_cases)
    # every failure a near miss and no catalogued mistake exactly: say so, rather than a
    # mistake matched loosely or a shape read from rounding noise
    close = near_miss(fspec, sorted(concept_failed), expected, got) if not matched else None
    if close is not None and len(close.cases) == len(concept_failed):
        first = [
            Diagnosis(
                "near-miss", near_miss_text(close, len(concept_failed)), "shape", cost(close.cases)
            )
        ]
        return (
            first
            + _validation(fspec, invalid_cases, failed, expected, got, mutants, validation, cost)
        )[:3]
    near = not matched and bool(concept_failed)
    if near:
        matched = _match(
            fspec, concept_cases, failed, expected, got, mutants, concept, 1, loose=True
        )
    unexplained = concept_failed - set().union(*(idx for _, idx in matched)) if matched else set()
    first: list[Diagnosis] = []
    for k, (m, idx) in enumerate(matched):
        text = _bound_text(m, fspec, idx, expected, got)
        if text != m.diagnosis:  # the learner's own bound explains the checks it clamps
            unexplained = {i for i in unexplained if not _clamp_consistent(m, expected[i], got[i])}
        # near: the learner's values are the mistake's only approximately, unless the
        # difference is the bound the text now names
        if k == 0 and (unexplained or (near and text == m.diagnosis)):
            text += SOMETHING_ELSE
        first.append(Diagnosis(m.id, text, "concept", cost(idx)))
    if concept_failed and not first:
        value_failed = sorted(failed & set(fspec.of_kind("value")))
        found = shapes.find_shape(
            [
                (inputs[i], expected[i], got[i], fspec.cases[i].rtol, fspec.cases[i].atol)
                for i in value_failed
            ],
            arg_names,
            [fspec.cases[i].hidden or bool(tainted and tainted[i]) for i in value_failed],
        )
        if found is not None:
            first = [
                Diagnosis(
                    "shape:" + found.id, found.text, "shape", cost(value_failed), found.detail
                )
            ]
    if concept_failed and not first and close is not None:
        # some failures are near misses and nothing names the others: the near ones at least,
        # and which checks are further off (a case id is public)
        others = [fspec.cases[i].id for i in sorted(concept_failed - set(close.cases))]
        first = [
            Diagnosis(
                "near-miss",
                near_miss_text(close, len(concept_failed), others),
                "shape",
                cost(close.cases),
            )
        ]
    second: list[Diagnosis] = []
    if first or not concept_failed:
        second = _validation(fspec, invalid_cases, failed, expected, got, mutants, validation, cost)
    first.sort(key=lambda d: -d.points)
    return (first + second)[:3]


def _validation(fspec, invalid_cases, failed, expected, got, mutants, validation, cost):
    """The validation mistakes that explain the failed input checks, costliest first."""
    found = [
        Diagnosis(m.id, m.diagnosis, "validation", cost(idx))
        for m, idx in _match(
            fspec, invalid_cases, failed, expected, got, mutants, validation, 3, True
        )
    ]
    found.sort(key=lambda d: -d.points)
    return found


def score(
    assignment: str,
    fspec: FunctionSpec,
    points: float,
    inputs: list[dict],
    expected: list[dict],
    got: list[dict],
    times: list[float] | None,
    mutants: Mapping[str, list[dict]],
    after_generated: bool = False,
    fixed_apart: bool = False,
    stub_note: str = "",
    broken_note: str = "",
) -> FunctionResult:
    """Verdicts, the score (points x Σ_kind share x weighted fraction passed, 2 decimals), diagnoses.

    ``mutants`` is read only when some case fails (it may be computed lazily).
    ``after_generated``: the learner's code met a generated input before this function's
    first case in the same process (an earlier function's cases): see CaseResult.
    ``fixed_apart``: the fixed cases ran in processes that held no generated input (`drills
    grade` under a course secret), or the secret is the public default (its generated inputs
    are anyone's to draw), so none of them is marked ``after_generated``.
    ``stub_note``: the function calls helpers that are still stubs (stubs.stub_text): when
    every case raises NotImplementedError it is the reason given (``error``), never "not
    attempted"; when some do, the first diagnosis. ``broken_note``: it calls helpers left
    undefined because their cell does not compile (submission.Program.broken_notes): the first
    diagnosis when some case raises NameError.
    """
    times = times or [0.0] * len(inputs)
    cases = []
    seen = after_generated
    for case, inp, e, g, t in zip(fspec.cases, inputs, expected, got, times):
        ok = same_outcome(e, g, case.rtol, case.atol)
        cases.append(
            CaseResult(
                id=case.id,
                passed=ok,
                weight=case.weight,
                hidden=case.hidden,
                note=case.note,
                expected=e,
                got=g,
                seconds=round(t, 6),
                inputs={"args": inp["args"], "kwargs": inp["kwargs"]},
                kind=case.kind,
                after_generated=seen,
            )
        )
        seen = seen or (case.hidden and not fixed_apart)
    attempted = not all(g.get("raised") == "NotImplementedError" for g in got)
    if attempted and any(c.after_generated and not (c.passed or c.hidden) for c in cases):
        _show_explained(fspec, cases, got, mutants)
    passed = [c.passed for c in cases] if attempted else [False] * len(cases)
    fraction = weighted_fraction(fspec, passed) if fspec.cases else 0.0
    result = FunctionResult(
        assignment=assignment,
        function=fspec.name,
        points=points,
        score=round(points * fraction, 2),
        fraction=fraction,
        attempted=attempted,
        cases=cases,
        kinds=kind_scores(fspec, points, passed),
        note=callee_note(inputs, assignment, fspec.name),
    )
    if stub_note and not attempted:
        result.error = "not graded yet: " + stub_note
    if attempted and fraction < 1.0:
        result.diagnoses = diagnose_all(
            fspec,
            points,
            inputs,
            expected,
            got,
            mutants,
            _arg_names(assignment, fspec.name),
            [c.hidden or c.after_generated for c in cases],
        )
        for did, raised, note in (
            ("broken-helper", "NameError", broken_note),
            ("stub-helper", "NotImplementedError", stub_note),
        ):
            hit = [i for i, g in enumerate(got) if g.get("raised") == raised]
            if note and hit:
                worth = case_points(fspec, points)
                result.diagnoses = [
                    Diagnosis(
                        did,
                        f"{note} ({len(hit)} of {len(got)} checks raise {raised})",
                        "shape",
                        round(sum(worth[i] for i in hit), 2),
                    )
                ] + (result.diagnoses[:2] if len(hit) < len(got) else [])
        if result.diagnoses:
            result.mistake, result.diagnosis = result.diagnoses[0].id, result.diagnoses[0].text
    return result


def _show_explained(
    fspec: FunctionSpec, cases: list[CaseResult], got: list[dict], mutants: Mapping
) -> None:
    """Clear ``after_generated`` on a failed fixed case whose value public data explains, so
    feedback shows it after all: NaN, ±inf, None or a bool, or the value a catalogued mistake
    returns on that case. Such a value carries nothing of a generated input (beyond which of
    a few public values it is); any other value, and any error message, stays hidden."""
    for i, (case, c) in enumerate(zip(fspec.cases, cases)):
        if not c.after_generated or c.passed or c.hidden or "value" not in got[i]:
            continue
        g = got[i]["value"]
        plain_scalar = g is None or isinstance(g, bool) or (isinstance(g, dict) and "$float" in g)
        if plain_scalar or any(
            "value" in mutants[m.id][i]
            and same_outcome(mutants[m.id][i], got[i], case.rtol, case.atol)
            and same_outcome(got[i], mutants[m.id][i], case.rtol, case.atol)
            for m in fspec.mistakes
        ):
            c.after_generated = False


def _arg_names(assignment: str, function: str) -> list[str]:
    """The reference's parameter names, for error shapes; none when the notebook can't be read."""
    from autograder.notebooks import notebook

    try:
        return notebook.parameters(assignment, function)
    except Exception:  # noqa: BLE001 (only a nicer wording is lost)
        return []


# -- feedback text -----------------------------------------------------------------------------


def feedback_text(r: FunctionResult, show_hidden: bool = False, max_cases: int = 6) -> str:
    lines = [f"{r.function}: {r.score:g} / {r.points:g} points"]
    if r.error:
        lines[0] += f" — {r.error}"
        return "\n".join(lines)
    if not r.attempted:
        lines[0] += " — not attempted yet (it still raises NotImplementedError)"
        return "\n".join(lines)
    lines[0] += f" ({r.passed} of {len(r.cases)} checks passed)"
    if r.kinds:
        lines.append("  " + kinds_text(r.kinds))
    if r.note:
        lines.append("  " + r.note)
    lines += ["  " + diagnosis_line(d, show_hidden) for d in r.diagnoses]
    failed = [c for c in r.cases if not c.passed]
    for c in failed[:max_cases]:
        label = c.note or c.id
        lines.append(f"  ✗ {c.id}: {label}")
        if shows_values(c, show_hidden):
            lines.append(f"      inputs:   {_render_inputs(c.inputs)}")
            expected, got, note = render_values(c, show_hidden)
            lines.append(f"      expected: {expected}")
            lines.append(f"      got:      {got}")
            if note:
                lines.append(f"      ({note})")
    if len(failed) > max_cases:
        lines.append(f"  … and {len(failed) - max_cases} more failed checks")
    return "\n".join(lines)


def kinds_text(kinds: list[KindScore]) -> str:
    """Points per kind, e.g. "the formula 2.1 / 2.1 · edge cases 0.45 / 0.45 · input checks 0 / 0.45"."""
    return " · ".join(f"{k.label} {k.score:g} / {k.points:g}" for k in kinds)


DIAGNOSIS_LABELS = {
    "concept": "Recognised mistake",
    "validation": "Recognised mistake (input checks)",
    "shape": "What your outputs show",
}


def diagnosis_line(d: Diagnosis, show_hidden: bool = False) -> str:
    """One diagnosis as feedback shows it: its learner-safe text, or with ``show_hidden``
    (the instructor's view) the text with the generated cases' specifics."""
    text = d.detail if show_hidden and d.detail else d.text
    return f"{DIAGNOSIS_LABELS.get(d.kind, 'Diagnosis')}: {text} (costs {d.points:g} points)"


def shows_values(c: CaseResult, show_hidden: bool = False) -> bool:
    """May feedback show this case's inputs, expected value and the learner's value?

    Not for a generated case (unless the instructor asks, ``--show-hidden``): the course
    secret and the student id stay the same on a regrade, so values shown in case order
    could be returned in call order by a resubmission that computes nothing. Pass/fail
    and the case's note are always shown; the values stay in results.json.
    """
    return not c.hidden or show_hidden


GOT_NOT_SHOWN = (
    "(not shown: your code had already been called on a generated input, which your result "
    "here could carry; run this case in your notebook to see it)"
)


def render_values(c: CaseResult, show_hidden: bool = False) -> tuple[str, str, str]:
    """Expected, got, and how far apart, for a case whose values are shown
    (:func:`shows_values`): as many digits as it takes for the two not to print alike
    (compare.render_pair). On a fixed case run after a generated one (``after_generated``) the
    learner's value is not shown, nor how far it is, unless ``show_hidden``."""
    if c.after_generated and not show_hidden:
        return render_outcome(c.expected), GOT_NOT_SHOWN, ""
    expected, got, note = render_pair(c.expected, c.got)
    return expected, got, "" if c.passed else note


def _render_inputs(inputs: Any) -> str:
    from autograder.cases.compare import render

    if not inputs:
        return "(hidden)"
    parts = [render(a, 60) for a in inputs.get("args", [])]
    kw = inputs.get("kwargs") or {}
    parts += [
        f"{k}={render(v, 40)}"
        for k, v in (kw.get("$dict", {}) if isinstance(kw, dict) else {}).items()
    ]
    return ", ".join(parts)
