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
import threading
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
from autograder.notebooks import reference, streams
from autograder.scoring import served, shapes, where

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
    kind: str  # "concept" | "validation" | "shape" | "helper" (a stubbed or broken helper) |
    # "name" (a name the grader's program lacks)
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
    # the points of the failed checks no diagnosis explains, and how many they are: with the
    # diagnoses' costs they sum to exactly what the function lost (evaluate.account)
    unexplained: float = 0.0
    unexplained_checks: int = 0

    @property
    def passed(self) -> int:
        return sum(c.passed for c in self.cases)

    def to_json(self, show_hidden: bool = False, for_learner: bool = False) -> dict:
        """Plain JSON. Generated cases lose their inputs unless ``show_hidden``; for a learner
        (``for_learner``) they also lose their expected and computed values (the learner's
        exception message included) and the diagnoses their details (replay guard), and
        every case loses its time (a correct function that sleeps x seconds would read out
        an input x through it)."""
        d = plain(self)
        for c in d["cases"]:
            if for_learner:
                # a case's time is a property of its inputs (code can sleep for x seconds)
                c.pop("seconds", None)
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
    """Encoded inputs of every case: [{"id", "args", "kwargs"}], plus "grad" on a gradient case
    (the inputs it differentiates: :func:`gradient_targets`) and "serve" on a case where the
    reference calls other functions of the notebook (their outcomes, by value: see
    :mod:`autograder.scoring.served`)."""
    out = []
    for case in fspec.cases:
        if case.make is not None:
            rng = seeds.case_rng(secret, assignment, f"{fspec.name}/{case.id}", student)
            args = tuple(case.make(rng))
        else:
            args = case.args
        out.append({"id": case.id, "args": encode(list(args)), "kwargs": encode(dict(case.kwargs))})
        if case.kind == "gradient":
            out[-1]["grad"] = gradient_targets(assignment, fspec, len(args), case.kwargs)
    served.attach(assignment, fspec.name, out)
    return out


def gradient_targets(
    assignment: str, fspec: FunctionSpec, n_args: int, kwargs: Mapping[str, Any]
) -> dict:
    """Where a gradient case's differentiated inputs are: ``{"with": [[name, position]],
    "detached": [...]}``, a position being the index of a positional argument or the name of
    a keyword one (codec.outcome_of); an input left to its default is not differentiated."""
    params = _arg_names(assignment, fspec.name)
    spec = {}
    for role, names in (("with", fspec.with_gradient), ("detached", fspec.detached)):
        spec[role] = []
        for name in names:
            if name in kwargs:
                spec[role].append([name, name])
            elif name in params and params.index(name) < n_args:
                spec[role].append([name, params.index(name)])
            else:
                raise ValueError(f"{fspec.name}: a gradient case does not give {name!r}")
    return spec


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
        with streams.redirected(stderr=io.StringIO()):
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
                outcomes.append(
                    outcome_of(fn, inp["args"], inp["kwargs"], namespace, inp.get("grad"))
                )
            times.append(time.perf_counter() - t0)
    return outcomes, times


def reference_run(assignment: str, name: str, inputs, root: Path | None = None) -> list[dict]:
    """The reference ``name``'s outcomes on ``inputs``, computed (memoised by
    :func:`autograder.scoring.memo.reference_outcomes`)."""
    ns = reference.namespace(assignment, root)
    return run_cases(ns[name], inputs, ns, serve=False)[0]


class Yielded(Exception):
    """A background computation of mistakes gave way to a check (:func:`yielding_to`)."""


_YIELD = threading.local()


@contextlib.contextmanager
def yielding_to(go_on: threading.Event):
    """In this thread, :func:`mistakes_run` raises :class:`Yielded` between two mistakes
    whenever ``go_on`` is clear: the check server's warm-up computes the known mistakes'
    outcomes in the background and gives the cores back to a click at once (the GIL and the
    process's share of the CPU) instead of finishing the function it is on. Nothing is kept
    of the interrupted function (its lock is released, its outcomes are not stored), so the
    click computes them itself if it needs them, and the warm-up starts that function again
    once the click is answered."""
    _YIELD.event = go_on
    try:
        yield
    finally:
        _YIELD.event = None


def _give_way() -> None:
    event = getattr(_YIELD, "event", None)
    if event is not None and not event.is_set():
        raise Yielded


def mistakes_run(
    assignment: str, fspec: FunctionSpec, inputs, root: Path | None = None
) -> dict[str, list[dict]]:
    """Every catalogued mistake's outcomes on ``inputs``, computed (memoised by
    :func:`autograder.scoring.memo.mistake_outcomes`)."""
    ns = reference.namespace(assignment, root)
    out = {}
    for m in fspec.mistakes:
        _give_way()
        out[m.id] = run_cases(m.build(ns), inputs, ns, serve=False)[0]
    return out


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


# Two wrong outcomes within float32's precision of each other are the same mistake: a mistake
# written in float32 is that mistake, not "that mistake and something else" (float32 is
# tolerated wherever the maths is right).
FLOAT32_RTOL = 1e-5
FLOAT32_ATOL = 1e-7


def _equal_for_matching(case: Case, a: dict, b: dict) -> bool:
    """Do two wrong outcomes look like the same mistake on this case?"""
    if "raised" in a and "raised" in b:
        return a["raised"] == b["raised"]
    rtol, atol = max(case.rtol, FLOAT32_RTOL), max(case.atol, FLOAT32_ATOL)
    if same_outcome(a, b, rtol, atol) and same_outcome(b, a, rtol, atol):
        return True
    # beyond float32's range a float32 value is ±inf: compare both as float32 would hold them
    a, b = _float32_range(a), _float32_range(b)
    return same_outcome(a, b, rtol, atol) and same_outcome(b, a, rtol, atol)


FLOAT32_MAX = 3.4028234663852886e38


def _float32_range(o: dict) -> dict:
    """An outcome with every number beyond float32's range made ±inf, as float32 holds it."""

    def f(j: Any) -> Any:
        if isinstance(j, float) and math.isfinite(j) and abs(j) > FLOAT32_MAX:
            return {"$float": "inf" if j > 0 else "-inf"}
        if isinstance(j, list):
            return [f(v) for v in j]
        if isinstance(j, dict) and ("$array" in j or "$tensor" in j):
            key = "$array" if "$array" in j else "$tensor"
            return {**j, key: f(j[key])}
        return j

    return {**o, "value": f(o["value"])} if "value" in o else o


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


def _small_difference(expected: dict, got: dict) -> bool:
    """Is the learner's value within NEAR_RTOL / NEAR_ATOL of the expected one (both ways)?"""
    if "raised" in expected or "raised" in got:
        return False
    return same_outcome(expected, got, NEAR_RTOL, NEAR_ATOL) and same_outcome(
        got, expected, NEAR_RTOL, NEAR_ATOL
    )


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
    failing: dict[int, list[int]] = {}  # where each mistake fails: once per call, not per pick
    # Failures are counted per cause, not per check: where the learner's gradient flows wrong
    # (into a detached input, or not into one with gradient), that gradient check belongs to
    # a cause of its own. A mistake that does not show that flow is judged without such checks
    # (a value mistake is not outvoted by a second mistake's gradient checks); one that shows
    # it agrees on a check where the flow is the same, whatever else differs there.
    grad = set(fspec.of_kind("gradient")) & set(among)
    flows = {i: _flow(fspec, got[i], expected[i]) for i in grad & set(failed)}

    def owned_elsewhere(mo: list[dict]) -> set[int]:
        return {i for i, f in flows.items() if f - _flow(fspec, mo[i], expected[i])}

    def same_flow(i: int, mo: list[dict]) -> bool:
        mine = _flow(fspec, mo[i], expected[i]) if i in flows else set()
        return bool(mine) and mine <= flows[i]

    def fails_on(m: Mistake, mo: list[dict]) -> list[int]:
        if id(m) not in failing:
            failing[id(m)] = [
                i
                for i in among
                if not same_outcome(expected[i], mo[i], fspec.cases[i].rtol, fspec.cases[i].atol)
            ]
        return failing[id(m)]

    while remaining and len(chosen) < most:
        best = None
        for order, m in candidates:
            if any(m is c for c, _ in chosen):
                continue
            mo = mutants[m.id]
            elsewhere = owned_elsewhere(mo) if flows else set()
            m_failed = [i for i in fails_on(m, mo) if i not in elsewhere]
            judged = remaining - elsewhere
            if not m_failed or not judged:
                continue
            if loose:
                agree = {
                    i for i in m_failed if _agrees_loosely(m, expected[i], mo[i], got[i])
                } & set(failed)
            else:
                agree = {i for i in m_failed if _agrees(fspec.cases[i], expected[i], mo[i], got[i])}
            agree |= {i for i in m_failed if same_flow(i, mo)}
            own = len(agree) / len(m_failed)
            explained = len(agree & judged) / len(judged)
            if m.exact and own < 1.0:
                continue  # its words hold on every input or not at all (Mistake.exact)
            if loose:  # the mistake's own failures, nearly all reproduced; the rest is "else"
                if not (own == 1.0 and explained > 0 or own >= 0.75 and explained >= 0.2):
                    continue
                # "else" is one other small difference: when the mistake explains less than
                # half of the failures, the others must lie as near the expected values as the
                # mistake's do to the learner's. Failures far off beside it are the mark of
                # another computation that only coincides with the mistake on some inputs
                # (averaging every outcome is averaging the distinct sampled ones where every
                # outcome is sampled): naming the mistake would be untrue.
                if explained < 0.5 and not all(
                    _small_difference(expected[i], got[i]) for i in remaining - agree
                ):
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


# A miss of the size a lower precision makes: every value of every failed check within this
# of the expected one, relative (bfloat16 keeps 8 significant bits, about 4e-3 relative per
# rounding, float16 11 bits; a few roundings add up), and some beyond NEAR_MISS_FACTOR times the
# tolerance. Read only where no catalogued mistake and no shape of the values says more: a sum
# over the wrong count (n / m) or a constant factor is named by its shape first.
LOW_PRECISION_RTOL = 2e-2


def low_precision(fspec: FunctionSpec, failed: list[int], expected, got) -> float | None:
    """The largest relative error over the failed cases ``failed`` when every one of their
    values is within LOW_PRECISION_RTOL of the expected one (relative, with 100 times the
    case's absolute tolerance for values near 0), finite where the expected one is and of its
    shape; None otherwise."""
    worst = 0.0
    for i in failed:
        case = fspec.cases[i]
        if "value" not in expected[i] or "value" not in got[i]:
            return None
        ne, ng = _numbers(expected[i]["value"]), _numbers(got[i]["value"])
        if ne is None or ng is None or ne[0] != ng[0]:
            return None
        # relative to the value, or to the largest value of the check: a lower precision
        # rounds the large entries of a result (a probability near 1) and an entry near 0
        # computed from them (1 − p) carries that rounding whole
        scale = max((abs(e) for e in ne[1] if math.isfinite(e)), default=0.0)
        for e, g in zip(ne[1], ng[1]):
            if not (math.isfinite(e) and math.isfinite(g)):
                if e == g or (math.isnan(e) and math.isnan(g)):
                    continue
                return None
            err = abs(g - e)
            if err > LOW_PRECISION_RTOL * max(abs(e), scale) + 100 * case.atol:
                return None
            if abs(e) > 0:
                worst = max(worst, err / max(abs(e), scale))
    return worst if failed else None


def _numbers(value):
    """(shape, flat values) of a value, or of a gradient check's value (one array per input,
    by name, in name order); None for anything else."""
    from autograder.cases.compare import numeric

    found = numeric(value)
    if found is not None or not isinstance(value, dict):
        return found
    inner = value.get("$dict", value)
    if not isinstance(inner, dict) or not inner:
        return None
    shape, flat = [], []
    for name in sorted(inner):
        part = numeric(inner[name])
        if part is None:
            return None
        shape.append((name, part[0]))
        flat.extend(part[1])
    return tuple(shape), flat


def low_precision_text(worst: float, failed: int, of: int | None = None) -> str:
    """The line of a miss the size of a lower precision on ``failed`` checks (``of``: out of
    that many failed checks, where some are further off); ``worst``: the largest relative
    error (said only where it is within LOW_PRECISION_RTOL: near 0 the bound is absolute)."""
    bound = worst if worst <= LOW_PRECISION_RTOL else LOW_PRECISION_RTOL
    which = f"{failed} of the {of}" if of is not None else f"the {failed}"
    return (
        f"every value of {which} failed check{'s' if failed > 1 or of else ''} is within "
        f"{bound:.2g} of the expected one, relative to the check's largest value: the size of "
        "the rounding of a lower "
        "precision (bfloat16 keeps about 3 significant digits, float16 about 4), far beyond "
        "float32's; look for a computation in bfloat16 or float16 (a .to(...), .half(), "
        "autocast) or a constant of that size (an epsilon, a clamp) that the formula does not have"
    )


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
    # an epsilon, low precision or a clamp moves most values a little; where the near misses are
    # fewer than the checks further off, something else is wrong, so the causes are not offered
    causes = f": {NEAR_MISS_CAUSES}." if len(nm.cases) >= len(others) else "."
    return (
        f"A near miss: {where} (|yours − expected| ≤ {nm.atol:g} + {nm.rtol:g} · |expected|). "
        f"The largest {what} is {nm.error:.2g}, against a tolerance of {nm.tolerance:.2g} "
        f"there{causes}"
    ) + (
        f" The other failed {'check is' if len(others) == 1 else 'checks are'} further off: "
        + ", ".join(others[:3])
        + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        + "."
        if others
        else ""
    )


# The id of a gradient line that names no cause: the gradient differs where the values differ
# too, and a wrong value almost always has a wrong gradient, so a clip, a kink or a detach is
# one explanation among many and the line says only what differs.
GRADIENT_WITH_VALUES = "gradient-with-values"
# what a gradient case's outcome is when the result is not a floating torch tensor (codec)
NO_GRADIENT_RAISED = "NoGradient"


def _gradient_entries(o: dict) -> dict:
    """A gradient outcome's entries, one per differentiated input (codec.outcome_of)."""
    v = o.get("value")
    return v["$dict"] if isinstance(v, dict) and isinstance(v.get("$dict"), dict) else {}


def _flow(fspec: FunctionSpec, o: dict, expected: dict) -> set[str]:
    """Where a gradient outcome's flow differs from the expected one's: each input marked
    "detached" that gradient reaches, each input marked "with gradient" that none reaches."""
    from autograder.cases.codec import GRADIENT
    from autograder.cases.compare import numeric

    got, want = _gradient_entries(o), _gradient_entries(expected)
    out = {n for n in fspec.detached if got.get(n) == GRADIENT and want.get(n) != GRADIENT}
    for n in fspec.with_gradient:
        g, e = numeric(got.get(n)), numeric(want.get(n))
        if g is not None and e is not None and not any(g[1]) and any(e[1]):
            out.add(n)
    return out


def _same_flow(fspec: FunctionSpec, idx, pool: set[int], expected, got, mo) -> set[int]:
    """The gradient checks of ``pool`` where the learner's gradient flows wrong in the way a
    matched mistake's does on every gradient check it was matched on (e.g. into
    `advantages`), and the mistake's does there too; empty when the mistake is not about
    the flow."""
    sig = None
    for i in sorted(set(idx) & set(fspec.of_kind("gradient"))):
        mine = _flow(fspec, mo[i], expected[i])
        sig = mine if sig is None else sig & mine
    if not sig:
        return set()
    return {
        j
        for j in pool
        if sig <= _flow(fspec, got[j], expected[j]) and sig <= _flow(fspec, mo[j], expected[j])
    }


def gradient_text(
    fspec: FunctionSpec,
    idx: list[int],
    expected: list[dict],
    got: list[dict],
    values_right: bool = True,
    tainted: list[bool] | None = None,
) -> tuple[str, bool]:
    """What the failed gradient checks ``idx`` show, input by input (nothing of a generated case
    but how many checks): gradient reaching an input marked "detached", no gradient reaching
    one marked "with gradient", or a gradient that differs from the reference's; and whether
    the text names a cause. A gradient that differs is read as a clip, a kink or a detach only
    when ``values_right`` (every value and edge check passes); otherwise it is said to differ
    as the values do."""
    from autograder.cases.codec import GRADIENT, TAMPERED_HOOK, TAMPERED_MODE
    from autograder.cases.compare import close, numeric

    n = len(idx)
    of = _gradient_entries
    raised = [i for i in idx if "raised" in got[i]]
    parts = []
    cause = False
    # NoGradient: the function returned, but not a floating tensor (a float, numbers rebuilt
    # into a list or an integer tensor): there "rebuilt from numbers" is what happened. Any
    # other exception the function (or autograd, for it) raised: an in-place change of a
    # tensor autograd saved, requires_grad_ on a computed tensor, a hook... its own message on
    # the ✗ line says which; a cause guessed here would be untrue.
    rebuilt = [i for i in raised if got[i]["raised"] == NO_GRADIENT_RAISED]
    # the grader's own refusal (a hook or a torch mode left active): its message, written by
    # the grader, says what it found; a learner's exception of that name is a crash
    tampered = [i for i in raised if got[i].get("message") in (TAMPERED_MODE, TAMPERED_HOOK)]
    crashed = [i for i in raised if i not in rebuilt and i not in tampered]
    if rebuilt:
        cause = True
        parts.append(
            f"on {len(rebuilt)} of the {n} failed gradient checks the result was not a "
            "floating torch tensor, so no gradient can flow through it: return a torch tensor "
            "computed from the inputs, never rebuilt from numbers"
        )
    for message in (TAMPERED_MODE, TAMPERED_HOOK):
        k = sum(1 for i in tampered if got[i]["message"] == message)
        if k:
            cause = True
            parts.append(f"on {k} of the {n} failed gradient checks {message}")
    if crashed:
        cause = True
        # a type the learner's code defined is not named from a generated check (its name
        # could spell an input; ``tainted``: a check run after a generated one): shapes
        kinds = sorted(
            {
                shapes.exception_name(
                    got[i]["raised"], fspec.cases[i].hidden or bool(tainted and tainted[i])
                )
                for i in crashed
            }
        )
        # the same exception on the checks of the values (a broadcast that fails whatever the
        # gradient): not one about the gradient, and said so
        on_values = {
            got[j]["raised"]
            for j in range(len(fspec.cases))
            if fspec.cases[j].kind in ("value", "edge")
            and "raised" in got[j]
            and "raised" not in expected[j]
        }
        if {got[i]["raised"] for i in crashed} <= on_values:
            parts.append(
                f"on {len(crashed)} of the {n} failed gradient checks your function raised "
                f"{' or '.join(kinds)}, as it did on valid inputs of the values' checks: the same "
                "error, whatever the gradient; the line that raises it is the one to fix"
            )
        else:
            parts.append(
                f"on {len(crashed)} of the {n} failed gradient checks your function raised "
                f"{' or '.join(kinds)} when its inputs require gradient: find the line that "
                "raises it (call your function on inputs that require gradient, then "
                ".backward() on its result, to read its message)"
            )
    for name in fspec.detached:
        k = sum(1 for i in idx if of(got[i]).get(name) == GRADIENT)
        if k:
            cause = True
            parts.append(
                f"gradient reaches `{name}`, which is detached here ({k} of {n} checks): "
                f"use `{name}.detach()`, so that only the inputs with gradient are trained"
            )
    for name in fspec.with_gradient:
        none = wrong = 0
        for i in idx:
            e, g = of(expected[i]).get(name), of(got[i]).get(name)
            c = fspec.cases[i]
            if g is None or close(e, g, c.rtol, c.atol):
                continue
            ng, ne = numeric(g), numeric(e)
            if ng is not None and ne is not None and not any(ng[1]) and any(ne[1]):
                none += 1
            else:
                wrong += 1
        if none:
            cause = True
            parts.append(
                f"no gradient reaches `{name}` ({none} of {n} checks): it was detached, or the "
                "result was computed from its numbers (.item(), .tolist(), numpy, "
                "torch.tensor(...)); the value can be right and the loss still trains nothing"
            )
        if wrong and values_right:
            cause = True
            parts.append(
                f"the gradient with respect to `{name}` differs from the reference's "
                f"({wrong} of {n} checks) although the values are right: look for a clip, a "
                "kink (max(0, x) passes no gradient at x = 0) or a detach that acts in the "
                "wrong place"
            )
        elif wrong:
            parts.append(
                f"the gradient with respect to `{name}` differs from the reference's "
                f"({wrong} of {n} checks), as your values do: a wrong value almost always "
                "has a wrong gradient, so check the gradient again once the values are right"
            )
    if not parts:
        parts.append(f"{n} gradient checks fail")
    return "The gradient: " + "; ".join(parts) + ".", cause


def diagnose_all(
    fspec: FunctionSpec,
    points: float,
    inputs: list[dict],
    expected: list[dict],
    got: list[dict],
    mutants: Mapping[str, list[dict]],
    arg_names: list[str] | tuple[str, ...] = (),
    tainted: list[bool] | None = None,
    assignment: str = "",
) -> list[Diagnosis]:
    """At most three diagnoses, the conceptual ones first, each group ordered by the points it costs.

    Value and edge failures are matched against the conceptual mistakes; when none
    matches, an error shape of the failing value cases may be named (autograder.scoring.shapes).
    Invalid-input failures are matched against the validation mistakes, and shown
    only after a conceptual diagnosis, or alone when every value and edge case passes:
    a learner whose formula is wrong hears about the formula first, or nothing.
    ``tainted[i]``: case i's outcome may carry a generated input (a generated case, or one
    run after one); an error shape on such cases names nothing of them (see shapes).
    Each diagnosis explains its own failed cases, none explained twice (see :func:`explain`).
    """
    return [
        d
        for d, _ in explain(
            fspec, points, inputs, expected, got, mutants, arg_names, tainted, assignment
        )
    ]


Explained = list[tuple[Diagnosis, frozenset[int]]]


def explain(
    fspec: FunctionSpec,
    points: float,
    inputs: list[dict],
    expected: list[dict],
    got: list[dict],
    mutants: Mapping[str, list[dict]],
    arg_names: list[str] | tuple[str, ...] = (),
    tainted: list[bool] | None = None,
    assignment: str = "",
    probes=None,
) -> Explained:
    """:func:`diagnose_all`'s diagnoses, each with the failed cases whose points it costs
    (disjoint sets: one cause, one line). ``assignment`` names the notebook whose stated
    properties (:mod:`autograder.scoring.stated`) may explain what nothing else does;
    ``probes`` (a list, or a function that returns it: run only when needed) the learner's
    results on inputs changed in one stated way (:mod:`autograder.scoring.relations`)."""
    worth = case_points(fspec, points)
    failed = {
        i
        for i, c in enumerate(fspec.cases)
        if not same_outcome(expected[i], got[i], c.rtol, c.atol)
    }
    if not failed:
        return []
    if callable(probes):
        probes = _once(probes)  # several lines may read them: the learner runs on them once
    concept_cases = [i for i, c in enumerate(fspec.cases) if c.kind != "invalid"]
    invalid_cases = fspec.of_kind("invalid")
    concept = [(o, m) for o, m in enumerate(fspec.mistakes) if not m.validation]
    validation = [(o, m) for o, m in enumerate(fspec.mistakes) if m.validation]
    # An exception the code raises on valid inputs too (a NameError from a deleted helper, a
    # TypeError) is a crash, not a choice about invalid inputs: the input checks that raise
    # it are not read as a missing check ("… instead of returning NaN"), they are the crash's.
    crash = {
        got[i]["raised"]
        for i in failed & set(concept_cases)
        if "raised" in got[i] and "raised" not in expected[i]
    }
    crashed = {
        i
        for i in failed
        if fspec.cases[i].kind != "value"
        and got[i].get("raised") in crash
        and got[i].get("raised") != expected[i].get("raised")
    }
    failed_checks = failed - crashed  # what the validation mistakes are matched against

    def cost(idx) -> float:
        return round(sum(worth[i] for i in idx), 2)

    def line(id_: str, text: str, kind: str, idx, detail: str = ""):
        return Diagnosis(id_, text, kind, cost(idx), detail), frozenset(idx)

    matched = _match(fspec, concept_cases, failed, expected, got, mutants, concept, 2)
    concept_failed = failed & set(concept_cases)
    # every failure a near miss and no catalogued mistake exactly: say so, rather than a
    # mistake matched loosely or a shape read from rounding noise
    close = near_miss(fspec, sorted(concept_failed), expected, got) if not matched else None
    if close is not None and len(close.cases) == len(concept_failed):
        first = [
            line("near-miss", near_miss_text(close, len(concept_failed)), "shape", close.cases)
        ]
        return (
            first
            + _validation(
                fspec, invalid_cases, failed_checks, expected, got, mutants, validation, line
            )
        )[:3]
    # every failed value off by a lower precision's rounding: said as that (below), not as a
    # known mistake matched loosely (an epsilon inside a log moves values by as little)
    # (measured once: the values' checks and the gradient checks apart)
    off = sorted(i for i in concept_failed if fspec.cases[i].kind in ("value", "edge"))
    grads = sorted(i for i in concept_failed if fspec.cases[i].kind == "gradient")
    worst = low_precision(fspec, off, expected, got) if off else None
    grad_worst = low_precision(fspec, grads, expected, got) if grads else None
    # (a gradient far off is a known mistake's about where gradient flows, matched loosely
    # below even where the values moved a little)
    rounding = not matched and worst is not None and (not grads or grad_worst is not None)
    near = not matched and bool(concept_failed) and not rounding
    if near:
        matched = _match(
            fspec, concept_cases, failed, expected, got, mutants, concept, 1, loose=True
        )
    # a known mistake is not named where the learner fails a check that the mistake itself
    # passes: there the code does something the mistake does not, so the mistake's words
    # ("you treated only turn max_turns as final") would be untrue of it
    # (a check another matched mistake owns is that one's: two slips, each right where only
    # the other shows)
    matched = [
        (m, idx)
        for m, idx in matched
        if _bound_text(m, fspec, idx, expected, got) != m.diagnosis  # the learner's own bound
        or not any(
            i not in idx
            and not any(i in other for o, other in matched if o is not m)
            and fspec.cases[i].kind in ("value", "edge")
            # far off there: a small second difference is "something else differs as well"
            and low_precision(fspec, [i], expected, got) is None
            and same_outcome(
                expected[i], mutants[m.id][i], fspec.cases[i].rtol, fspec.cases[i].atol
            )
            for i in concept_failed
        )
    ]
    if not matched and close is None:  # every known mistake set aside: the near misses
        close = near_miss(fspec, sorted(concept_failed), expected, got)
    unexplained = concept_failed - set().union(*(idx for _, idx in matched)) if matched else set()
    first: Explained = []
    # one cause, one line: a recognised mistake about where gradient flows (an input not
    # detached, or detached where it must not be) owns every failed gradient check that shows
    # that same flow, also where something else differs there too (the values of another
    # mistake): the gradient line below would name the same cause again, with part of its cost
    grad_cases = set(fspec.of_kind("gradient"))
    if grad_cases and matched:
        flows = []
        for m, idx in matched:
            gone = _same_flow(fspec, idx, unexplained & grad_cases, expected, got, mutants[m.id])
            unexplained -= gone
            flows.append((m, set(idx) | gone))
        matched = flows
    for k, (m, idx) in enumerate(matched):
        text = _bound_text(m, fspec, idx, expected, got)
        if text != m.diagnosis:  # the learner's own bound explains the checks it clamps
            clamped = {i for i in unexplained if _clamp_consistent(m, expected[i], got[i])}
            unexplained -= clamped
            idx = set(idx) | clamped
        # near: the learner's values are the mistake's only approximately, unless the
        # difference is the bound the text now names
        if k == 0 and (unexplained or (near and text == m.diagnosis)):
            text += SOMETHING_ELSE
        first.append(line(m.id, text, "concept", idx))
    if concept_failed and not first:
        # two inputs the wrong way round: the learner's results on the exchanged inputs are
        # the expected ones (an exact identification, before any shape read from the values)
        swap = _exchanged(assignment, fspec, concept_failed, expected, got, probes)
        if swap is not None:
            from autograder.scoring import relations as rel

            meta, hit = swap
            values = {i for i in concept_failed if fspec.cases[i].kind in ("value", "edge")}
            text = rel.exchanged_text(meta, hit, len(values))
            kind = "identified" if meta.get("relation") == "identify" else "exchanged"
            first = [line(f"shape:{kind}", text, "shape", hit)]
    if concept_failed and not first:

        def shape_of(idx: list[int], kinds: tuple[str, ...]):
            # the passing checks of the same kinds: a relation they contradict is not named
            passing = [
                i
                for i in range(len(fspec.cases))
                if fspec.cases[i].kind in kinds and i not in failed
            ]
            return shapes.find_shape(
                _rows(fspec, idx, inputs, expected, got),
                arg_names,
                [fspec.cases[i].hidden or bool(tainted and tainted[i]) for i in idx],
                _rows(fspec, passing, inputs, expected, got),
            )

        # the shape of the formula's failed checks, and of the edge rules' too when the same
        # shape holds there (a keepdim or a crash is the same on both)
        value_failed = sorted(failed & set(fspec.of_kind("value")))
        found = shape_of(value_failed, ("value",))
        both = sorted(concept_failed)
        if found is not None and both != value_failed:
            wider = shape_of(both, ("value", "edge"))  # the same shape on the edge checks too
            if wider is not None and wider.id == found.id:
                found, value_failed = wider, both
        if found is not None:
            # a value times one constant (or negated) has its gradient times that constant:
            # the failed gradient checks that show exactly that are the same cause's
            scaled = _gradients_alike(fspec, found, sorted(failed), expected, got)
            text, detail = found.text, found.detail
            if scaled:
                also = (
                    f" Your gradient is the expected one changed the same way on {len(scaled)} "
                    f"gradient check{'s' if len(scaled) > 1 else ''}: the same cause."
                )
                text, detail = text + also, (detail + also if detail else "")
            first = [line("shape:" + found.id, text, "shape", set(value_failed) | scaled, detail)]
    if concept_failed and not first and not matched:
        # every failed check off by the rounding of a lower precision, some beyond a near miss
        # (the values' checks; a gradient check that fails with them is the gradient line's)
        if worst is not None:
            # the failed gradient checks off by as little are the same cause's (measured, not
            # assumed: a gradient further off keeps its own line)
            own = off + (grads if grad_worst is not None else [])
            text = low_precision_text(max(worst, grad_worst or 0.0), len(off))
            if grad_worst is not None:
                text += (
                    f"; the gradient is off by as little on {len(grads)} gradient "
                    f"check{'s' if len(grads) > 1 else ''}: the same cause"
                )
            first = [line("near-miss:precision", text, "shape", own)]
        elif len(off) >= 3:
            # most of them (two thirds, two at least) off by that rounding, the rest further:
            # said of those, and the others named (a lower precision also flips a comparison
            # or loses a large logit's last digits; a formula that only agrees near 0, a
            # truncated series, is close on a few checks, not on most)
            within = [i for i in off if low_precision(fspec, [i], expected, got) is not None]
            nearer = close is not None and 2 * len(close.cases) >= len(off)
            if len(within) >= 2 and 3 * len(within) >= 2 * len(off) and not nearer:
                most = low_precision(fspec, within, expected, got) or 0.0
                rest = [fspec.cases[i].id for i in off if i not in within]
                text = low_precision_text(most, len(within), len(off)) + (
                    f". The other failed check{'s are' if len(rest) > 1 else ' is'} further "
                    f"off: {', '.join(rest[:3])}"
                    + (f" and {len(rest) - 3} more" if len(rest) > 3 else "")
                )
                first = [line("near-miss:precision", text, "shape", within)]
    if concept_failed and not first and close is not None:
        # some failures are near misses and nothing names the others: the near ones at least,
        # and which checks are further off (a case id is public)
        others = [fspec.cases[i].id for i in sorted(concept_failed - set(close.cases))]
        # only where the near misses are at least as many as the checks further off: a few
        # checks near 0 where a different formula happens to agree (a truncated series) read as
        # a rounding slip, and sent a learner to look for an epsilon or a dtype
        if len(close.cases) >= len(others):
            first = [
                line(
                    "near-miss",
                    near_miss_text(close, len(concept_failed), others),
                    "shape",
                    close.cases,
                )
            ]
    if concept_failed and not first:
        # no shape of the values: which checks fail, when an argument tells them apart
        among = sorted(set(fspec.of_kind("value") + fspec.of_kind("edge")))
        found_cases = _separating_argument(
            fspec, among, failed, inputs, arg_names, _default_check(fspec, probes)
        )
        if found_cases is not None:
            text, idx = found_cases
            # which checks fail is a localisation, not a cause: the argument that tells them
            # apart need not be the one the slip is about (a default can hide a slip that has
            # nothing to do with it)
            first = [line("where:which-cases", text, "where", idx)]
    if concept_failed and not first:
        # nor which checks: which entries of each value differ, by a sign rule of the inputs
        value_failed = sorted(failed & set(fspec.of_kind("value")))
        value_passed = sorted(set(fspec.of_kind("value")) - failed)
        entries = shapes.where_differs(
            _rows(fspec, value_failed, inputs, expected, got),
            arg_names,
            _rows(fspec, value_passed, inputs, expected, got),
        )
        if entries is not None:
            first = [line("shape:" + entries.id, entries.text, "shape", value_failed)]
    if concept_failed and not first:
        # nothing catalogued and no shape: the part of the result every failure lies in, when
        # one does (the more specific), else which property the text states the outcomes break
        among = sorted(set(fspec.of_kind("value") + fspec.of_kind("edge")))
        todo = concept_failed & set(among)
        part = where.parts(fspec, among, failed, todo, expected, got) if todo else None
        found_relations = _relations(fspec, concept_failed, expected, got, probes)
        # a relation broken on every check the part line would own says more (what the
        # code does with its inputs, not only where its result is wrong): it comes first
        covering = part is not None and any(part.cases <= set(hit) for _, hit, _ in found_relations)
        if part is not None and part.cases == todo and not covering:
            first = [line(part.id, part.text, "where", part.cases)]
        else:
            first = _stated_lines(
                assignment,
                fspec,
                sorted(concept_failed),
                inputs,
                got,
                line,
                relations=found_relations,
            )
    elif concept_failed and len(first) == 1:
        # one line explains some of the failures: a stated property may explain the rest
        rest = concept_failed - first[0][1]
        if rest:
            first += _stated_lines(
                assignment,
                fspec,
                sorted(rest),
                inputs,
                got,
                line,
                len(concept_failed),
                relations=_relations(fspec, rest, expected, got, probes),
            )[:1]
    if crashed and first and first[0][0].id == "shape:raised":
        d, idx = first[0]
        n = len(crashed)
        also = f" (it raised the same on {n} other check{'s' if n > 1 else ''} as well)"
        d.text += also
        d.detail += also if d.detail else ""
        first[0] = (d, idx | frozenset(crashed))
    # the gradient checks no line above explains: what they show, after the mistakes and
    # shapes named from the values (more specific), before the input checks
    explained = set().union(*(idx for _, idx in first)) if first else set()
    grad_failed = sorted((failed & set(fspec.of_kind("gradient"))) - explained)
    second: Explained = []
    if first or grad_failed or not concept_failed:
        second = _validation(
            fspec, invalid_cases, failed_checks, expected, got, mutants, validation, line
        )
    # a property line comes after the mistake or shape it completes (the more specific)
    first.sort(key=lambda d: (d[0].kind == "property", -d[0].points))
    # the failed checks of the formula and the edge rules that no line above explains: where
    # they fall (a mode, an input function, an argument given or not, an edge rule), when every
    # check on the other side passes; only where it leaves the other lines room
    among = sorted(set(fspec.of_kind("value") + fspec.of_kind("edge")))
    rest = (concept_failed & set(among)) - explained
    if rest and len(first) + bool(grad_failed) + len(second) < 3:
        # which part of the result is wrong (a field, the last item), else which checks: the
        # failed gradient checks with them when they fall on the same side (one place, one
        # line), else without them
        with_grad = sorted(set(among) | set(fspec.of_kind("gradient")))
        found_where = where.parts(fspec, among, failed, rest, expected, got, after=bool(first))
        if found_where is None and grad_failed:
            found_where = where.localise(
                fspec,
                with_grad,
                failed,
                rest | set(grad_failed),
                inputs,
                arg_names,
                bool(first),
                _default_check(fspec, probes),
            )
        if found_where is None:
            found_where = where.localise(
                fspec,
                among,
                failed,
                rest,
                inputs,
                arg_names,
                after=bool(first),
                default_check=_default_check(fspec, probes),
            )
        if found_where is not None:
            first.append(line(found_where.id, found_where.text, "where", found_where.cases))
            grad_failed = [i for i in grad_failed if i not in found_where.cases]
    # failed checks still left on which the code raised where a value belongs: what the code
    # does there (not why), after every line that says more, where there is room
    left = (concept_failed & set(among)) - set().union(set(), *(idx for _, idx in first))
    raised_left = sorted(i for i in left if "raised" in got[i] and "raised" not in expected[i])
    if (
        raised_left
        and len({got[i]["raised"] for i in raised_left}) == 1
        and len(first) + bool(grad_failed) + len(second) < 3
    ):
        first.append(_raised_some(fspec, raised_left, got, tainted, bool(first), line))
    if grad_failed:  # after the lines named from the values, whatever it costs
        values_right = not failed & set(fspec.of_kind("value") + fspec.of_kind("edge"))
        text, cause = gradient_text(fspec, grad_failed, expected, got, values_right, tainted)
        first.append(
            line("gradient" if cause else GRADIENT_WITH_VALUES, text, "shape", grad_failed)
        )
    return (first + second)[:3]


def _raised_some(fspec: FunctionSpec, idx: list[int], got, tainted, after: bool, line):
    """The line for failed checks on which the code raised one exception where a value
    belongs: its type (a name the learner's code chose only when every such check is fixed),
    how many, and which of them the notebook shows."""
    hidden = [fspec.cases[i].hidden or bool(tainted and tainted[i]) for i in idx]
    name = shapes.exception_name(got[idx[0]]["raised"], any(hidden))
    shown = [fspec.cases[i].id for i, h in zip(idx, hidden) if not h][:3]
    where = f" (among them {', '.join(shown)})" if shown else ""
    n = len(idx)
    some = "other " if after else ""
    text = (
        f"your function raised {name} on {n} {some}valid input{'s' if n > 1 else ''} where a "
        f"value belongs{where}: valid inputs must give a value, so find the check or the line "
        "that stops them"
    )
    return line("shape:raised", text, "shape", idx)


def _gradients_alike(fspec: FunctionSpec, found, idx, expected, got) -> set[int]:
    """The failed gradient checks of ``idx`` on which every gradient is the expected one changed
    as the shape ``found`` changes the values, when that shape is linear (a constant factor, a
    flipped sign): each input's gradient then changes the same way. Empty otherwise."""
    from autograder.cases.compare import numeric

    if found.id not in ("factor", "sign") or found.holds is None:
        return set()
    import numpy as np

    out = set()
    for i in idx:
        if fspec.cases[i].kind != "gradient" or "value" not in got[i]:
            continue
        e_all, g_all = _gradient_entries(expected[i]), _gradient_entries(got[i])
        if set(e_all) != set(g_all) or not e_all:
            continue
        ok, seen = True, False
        for name, e in e_all.items():
            g = g_all[name]
            ne, ng = numeric(e), numeric(g)
            if ne is None or ng is None:
                ok = ok and e == g
                continue
            if ne[0] != ng[0]:
                ok = False
                break
            ea, ga = np.asarray(ne[1], float), np.asarray(ng[1], float)
            if not (np.all(np.isfinite(ea)) and np.all(np.isfinite(ga))):
                ok = False
                break
            c = fspec.cases[i]
            seen = seen or bool(np.any(np.abs(ea) > c.atol))
            if not found.holds(ea, ga, c.rtol, c.atol):
                ok = False
                break
        if ok and seen:
            out.add(i)
    return out


def _stated_lines(
    assignment: str,
    fspec: FunctionSpec,
    idx: list[int],
    inputs,
    got,
    line,
    failed: int = 0,
    relations: list | None = None,
):
    """At most two lines, each a property the function's text states that the learner's
    outcomes break, with the failed checks of ``idx`` that break it (``failed``: how many
    checks failed in all, when ``idx`` is what the lines before left) (disjoint, the property
    that breaks on the most checks first; see :mod:`autograder.scoring.stated`). The line
    names only fixed checks by id, and counts the others."""
    if not assignment:
        return []
    # imported here: it needs numpy, which `import autograder.cli` must not load (seconds)
    from autograder.scoring import relations as rel
    from autograder.scoring import stated

    relations = relations or []

    kinds = [c.kind for c in fspec.cases]
    found: list[tuple[str, set[int], Any]] = [
        (prop.id, hit, prop)
        for prop, hit in stated.broken_on(assignment, fspec.name, idx, inputs, got, kinds)
    ]
    # the relations a probe found broken (inputs changed in one stated way): the same kind of
    # line, a property the text states, read from two of the learner's results
    found += [
        ("relation:" + str(meta["id"]), set(hit) & set(idx), (meta, notes))
        for meta, hit, notes in relations
    ]
    out: Explained = []
    taken: set[int] = set()
    for did, hit, what in sorted(found, key=lambda ph: -len(ph[1])):
        own = hit - taken
        if not own or len(out) == 2:
            continue
        taken |= own
        shown = [fspec.cases[i].id for i in sorted(own) if not fspec.cases[i].hidden][:3]
        if did.startswith("relation:"):
            meta, notes = what
            text = rel.line_text(meta, own, failed or len(idx), [t for k, t in notes if k in own])
        else:
            text = stated.property_text(what, own, failed or len(idx), shown)
        out.append(line(did, text, "property", own))
    return out


def _relations(fspec: FunctionSpec, failed: set[int], expected, got, probes) -> list:
    """The relations of :mod:`autograder.scoring.relations` the learner's results break on
    the failed checks ``failed``; ``probes`` is a list or a function that returns one (the
    probes run only here, when a line may need them); none when there are no probes."""
    found = _probe_list(probes) if failed else None
    if found is None:
        return []
    from autograder.scoring import relations as rel

    return rel.broken(fspec, set(failed), expected, got, found)


def _probe_list(probes) -> list[dict] | None:
    """The probes with the learner's outcomes: ``probes`` as given (a list), or run (a
    function that returns one); None where there are none or they cannot run (a probe that
    cannot run says nothing; no check depends on it)."""
    if probes is None:
        return None
    try:
        found = probes() if callable(probes) else probes
    except Exception:  # noqa: BLE001
        return None
    return list(found or [])


def _once(probes):
    """``probes`` (a function that runs the learner on the probe inputs) called at most once:
    its result, or its exception, is kept for every later call."""
    kept: list = []

    def run():
        if not kept:
            try:
                kept.append((True, probes()))
            except Exception as e:  # noqa: BLE001 (raised again to each caller, as the first time)
                kept.append((False, e))
        ok, value = kept[0]
        if not ok:
            raise value
        return value

    return run


def _exchanged(assignment: str, fspec: FunctionSpec, failed: set[int], expected, got, probes):
    """relations.exchanged on the learner's probes, run only where the function has a probe
    that exchanges two inputs (none: the probes are not asked for here)."""
    if probes is None or not failed:
        return None
    from autograder.assignments import probes as catalogue
    from autograder.scoring import relations as rel

    listed = catalogue.probes_of(assignment, fspec.name)
    if not any(p.exchange or p.relation == "identify" for p in listed):
        return None
    found = _probe_list(probes)
    return None if found is None else rel.exchanged(fspec, set(failed), expected, got, found)


def _rows(fspec: FunctionSpec, idx, inputs, expected, got) -> list[shapes.FailingCase]:
    """The cases ``idx`` as the error shapes read them: (inputs, expected, yours, rtol, atol)."""
    return [(inputs[i], expected[i], got[i], fspec.cases[i].rtol, fspec.cases[i].atol) for i in idx]


def _argument_features(fspec: FunctionSpec, inp: dict, arg_names) -> dict[tuple, Any]:
    """What tells a case's arguments apart in words: each argument it gives (not None, by
    position or by keyword), and each string argument's value (a mode)."""
    feats: dict[tuple, Any] = {}
    kw = inp.get("kwargs") or {}
    kw = kw.get("$dict", kw) if isinstance(kw, dict) else {}
    given = list(kw.items()) + [
        (arg_names[k] if k < len(arg_names) else f"argument {k + 1}", v)
        for k, v in enumerate(inp.get("args") or [])
    ]
    for name, v in given:
        if v is not None:
            feats[("given", name)] = True
        if isinstance(v, str):
            feats[("equals", name)] = v
    return feats


def _default_check(fspec: FunctionSpec, probes):
    """A function (name, failed checks) -> whether the learner's results with that argument
    left to its default are the expected ones on those checks (relations.default_agrees), so
    that "every failing check gives `beta`" is said only where `beta` is what they share
    because of the slip, not by the accident of which checks give it."""

    def check(name: str, bad: set[int]) -> bool:
        found = _probe_list(probes)
        if found is None:
            return False
        from autograder.scoring import relations as rel

        return rel.default_agrees(fspec, name, set(bad), found)

    return check


def _separating_argument(
    fspec: FunctionSpec,
    among: list[int],
    failed: set[int],
    inputs: list[dict],
    arg_names,
    default_check=None,
) -> tuple[str, set[int]] | None:
    """Which checks fail, in words of the arguments, two or more on each side: exactly those
    with one value of a string argument (a mode); or only checks that give some argument, every
    check that leaves it to its default passing. Returns that and the failed checks.

    Whether a generated check gives an argument is a property of its inputs: the rule is found
    on every check, but the words speak of the fixed checks only (the notebook shows their
    arguments), and the line is given only when fixed checks show it on both sides."""
    bad = {i for i in among if i in failed}
    if len(bad) < 2 or len(among) - len(bad) < 2:
        return None
    feats = {i: _argument_features(fspec, inputs[i], arg_names) for i in among}
    fixed = {i for i in among if not fspec.cases[i].hidden}
    hidden = len(fixed) < len(among)
    where = "on the checks the notebook shows, " if hidden else ""
    keys = sorted({k for f in feats.values() for k in f})
    for key in keys:
        if key[0] != "equals":
            continue
        for value in sorted({feats[i][key] for i in bad & fixed if key in feats[i]}):
            holds = {i for i in among if feats[i].get(key) == value}
            if holds == bad and fixed - holds:
                text = (
                    f"{where}your values are wrong on every check with `{key[1]}` = {value!r} "
                    "and right on every other: look at that case of your code"
                )
                return text, bad
    for key in keys:
        if key[0] != "given":
            continue
        without = {i for i in among if not feats[i].get(key)}
        shown = bad & fixed and len(without & fixed) >= 2
        if len(without) >= 2 and not bad & without and shown:
            if default_check is None or not default_check(key[1], bad):
                continue  # right without it is not shown: the checks may only happen to give it
            name = f"`{key[1]}`"
            text = (
                f"{where}every failing check gives {name}, and every check that leaves it to "
                "its default passes: start from a failing check, and compare what your code "
                f"computes there with the text (the slip need not be about {name} itself)"
            )
            return text, bad
    return None


def _validation(fspec, invalid_cases, failed, expected, got, mutants, validation, line):
    """The validation mistakes that explain the failed input checks, costliest first."""
    found = [
        line(m.id, m.diagnosis, "validation", idx)
        for m, idx in _match(
            fspec, invalid_cases, failed, expected, got, mutants, validation, 3, True
        )
    ]
    found.sort(key=lambda d: -d[0].points)
    return found


def account(
    fspec: FunctionSpec, points: float, score: float, passed: list[bool], explained: Explained
) -> tuple[list[Diagnosis], float, int]:
    """The diagnoses with costs that add up: (diagnoses, points of the failed checks no line
    explains, how many such checks). Each line costs its own cases' points, rounded so that
    the lines and the rest sum to exactly what the function lost (``points`` − ``score``)."""
    worth = case_points(fspec, points)
    failed = {i for i, ok in enumerate(passed) if not ok}
    seen: set[int] = set()
    lines: list[tuple[Diagnosis, list[int]]] = []
    for d, idx in explained:
        own = sorted((set(idx) & failed) - seen)  # one cause, one line: never a case twice
        if own:
            seen |= set(own)
            lines.append((d, own))
    rest = sorted(failed - seen)
    exact = [sum(worth[i] for i in own) for _, own in lines] + [sum(worth[i] for i in rest)]
    cents = _apportion(exact, round((round(points, 2) - score) * 100))
    out = [Diagnosis(d.id, d.text, d.kind, c / 100, d.detail) for (d, _), c in zip(lines, cents)]
    return out, cents[-1] / 100, len(rest)


def _apportion(exact: list[float], total: int) -> list[int]:
    """Whole cents for each of ``exact`` (points) summing to ``total`` cents: each rounded
    down, the cents left over given to the largest remainders (0 stays 0)."""
    scaled = [x * 100 for x in exact]
    base = [math.floor(x + 1e-9) for x in scaled]
    left = total - sum(base)
    order = sorted(
        (k for k, x in enumerate(scaled) if x > 1e-9),
        key=lambda k: -(scaled[k] - base[k]),
    )
    k = 0
    while left > 0 and order:
        base[order[k % len(order)]] += 1
        left -= 1
        k += 1
    while left < 0 and order:
        j = max(order, key=lambda q: base[q])
        if base[j] == 0:
            break
        base[j] -= 1
        left += 1
    return base


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
    unbound_note: str = "",
    probes=None,
) -> FunctionResult:
    """Verdicts, the score (points x Σ_kind share x weighted fraction passed, 2 decimals), diagnoses.

    ``mutants`` is read only when some case fails (it may be computed lazily).
    ``after_generated``: the learner's code met a generated input before this function's
    first case in the same process (an earlier function's cases): see CaseResult.
    ``fixed_apart``: the fixed cases ran in processes that held no generated input (`drills
    grade` under a course secret), or the secret is the public default (its generated inputs
    are anyone's to draw), so none of them is marked ``after_generated``.
    ``stub_note``: the function calls helpers that are still stubs (stubs.stub_text), so the
    function itself was written (attempted, even when every case raises NotImplementedError):
    the first diagnosis, costing the checks the stubs made raise. ``broken_note``: it calls
    helpers left undefined because their definitions do not compile (stubs.broken_text): the
    first diagnosis, costing the checks that raise NameError. Both are kind "helper", one form
    for the two slips, each with its cost in every view. ``unbound_note``: names the function
    uses that the grader's program does not define (unbound.note: a helper the saved file lost,
    an exploration cell's import): kind "name", costing the checks that raise NameError, in the
    same form. ``probes``: the learner's results on inputs changed in one stated way, a list
    or a function returning one, read only when a check failed (see :func:`explain`); they
    never change a verdict or the score.
    """
    times = times or [0.0] * len(inputs)
    got = _cleaned_messages(assignment, fspec, inputs, expected, got)
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
    # a function written on top of a stubbed helper is attempted: what the stub costs it is
    # a cost line (below), not "not attempted" or "not graded yet"
    attempted = bool(stub_note) or not all(g.get("raised") == "NotImplementedError" for g in got)
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
    if attempted and fraction < 1.0:
        # one cause, one line: the checks a stubbed or undefined helper makes raise are
        # that helper's, and no other diagnosis is read from them
        helpers: Explained = []
        for did, raised, note, kind in (
            ("broken-helper", "NameError", broken_note, "helper"),
            ("unbound-name", "NameError", unbound_note, "name"),
            ("stub-helper", "NotImplementedError", stub_note, "helper"),
        ):
            hit = [
                i
                for i, (g, ok) in enumerate(zip(got, passed))
                if not ok and g.get("raised") == raised and not any(i in idx for _, idx in helpers)
            ]
            if note and hit:
                told = ""
                if kind == "name":  # Python's own words too, from a check anyone may see
                    shown = [
                        str(got[i].get("message", ""))
                        for i in hit
                        if not (cases[i].hidden or cases[i].after_generated)
                    ]
                    told = f': "{shown[0]}"' if shown and shown[0] else ""
                line = f"{note} ({len(hit)} of {len(got)} checks raise {raised}{told})"
                helpers.append((Diagnosis(did, line, kind, 0.0), frozenset(hit)))
        taken = set().union(*(idx for _, idx in helpers)) if helpers else set()
        rest = [expected[i] if i in taken else g for i, g in enumerate(got)]
        explained = helpers + explain(
            fspec,
            points,
            inputs,
            expected,
            rest,
            mutants,
            _arg_names(assignment, fspec.name),
            [c.hidden or c.after_generated for c in cases],
            assignment,
            probes,
        )
        result.diagnoses, result.unexplained, result.unexplained_checks = account(
            fspec, points, result.score, passed, explained[:3]
        )
        if result.diagnoses:
            result.mistake, result.diagnosis = result.diagnoses[0].id, result.diagnoses[0].text
    return result


def _cleaned_messages(
    assignment: str, fspec: FunctionSpec, inputs: list[dict], expected: list[dict], got: list[dict]
) -> list[dict]:
    """``got`` with the learner's exception message on each fixed case cleaned of reference
    and hidden material (redact.clean_message): the only messages feedback may show. A
    generated case's message is never shown to a learner and stays as it was."""
    from autograder.scoring import redact

    hidden: list | None = None
    out = []
    for case, g in zip(fspec.cases, got):
        msg = g.get("message") if isinstance(g, dict) else None
        if case.hidden or not isinstance(msg, str) or not msg:
            out.append(g)
            continue
        if hidden is None:  # once for all the function's messages
            hidden = redact.hidden_numbers(
                [inp.get("args"), inp.get("kwargs"), e.get("value")]
                for c, inp, e in zip(fspec.cases, inputs, expected)
                if c.hidden
            )
        cleaned = redact.clean_message(msg, assignment, numbers=hidden)
        out.append(g if cleaned == msg else {**g, "message": cleaned})
    return out


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


NOT_ATTEMPTED = "not attempted yet: it still raises NotImplementedError"
NOT_GRADED = "Not graded: none of its checks counted"


def lost_points(r: FunctionResult) -> float:
    """What the function lost, as its cost lines say it (2 decimals)."""
    return round(round(r.points, 2) - r.score, 2)


def not_attempted_line(r: FunctionResult) -> str:
    """What feedback says of a function left as the exercise's stub: not attempted, and what
    that costs (its own points: its callers are graded with the reference)."""
    return f"{NOT_ATTEMPTED} (costs {points_text(lost_points(r))})"


def not_graded_line(r: FunctionResult) -> str:
    """The cost line under the reason a function could not be graded (``r.error``)."""
    return f"{NOT_GRADED} (costs {points_text(lost_points(r))})"


def feedback_text(r: FunctionResult, show_hidden: bool = False, max_cases: int = 6) -> str:
    """One function's feedback as `drills check` prints it. Every point lost has its cost
    line, in the words report.feedback_html and widgets.render_report use: a diagnosis (a
    helper to fix among them) or the unexplained checks, the reason it was not graded, or
    that it was not attempted."""
    lines = [f"{r.function}: {r.score:g} / {r.points:g} points"]
    if r.error:
        lines[0] += f" — {r.error}"
        lines.append("  " + not_graded_line(r))
        return "\n".join(lines)
    if not r.attempted:
        lines[0] += " — " + not_attempted_line(r)
        return "\n".join(lines)
    lines[0] += f" ({r.passed} of {len(r.cases)} checks passed)"
    if r.kinds:
        lines.append("  " + kinds_text(r.kinds))
    if r.note:
        lines.append("  " + r.note)
    lines += ["  " + diagnosis_line(d, show_hidden) for d in r.diagnoses]
    if r.unexplained_checks:
        lines.append("  " + unexplained_line(r.unexplained_checks, r.unexplained))
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
    "shape": "What your function does",
    "property": "A property the notebook states",
    "where": "Where your function goes wrong",
    "helper": "A helper to fix",
    "name": "A name the grader's program lacks",
}


def diagnosis_line(d: Diagnosis, show_hidden: bool = False) -> str:
    """One diagnosis as feedback shows it: its learner-safe text, or with ``show_hidden``
    (the instructor's view) the text with the generated cases' specifics."""
    text = d.detail if show_hidden and d.detail else d.text
    return f"{DIAGNOSIS_LABELS.get(d.kind, 'Diagnosis')}: {text} (costs {points_text(d.points)})"


def unexplained_line(checks: int, points: float) -> str:
    """The line for the failed checks no diagnosis explains, so that the costs shown add up."""
    one = checks == 1
    return (
        f"Not recognised: {checks} failed {'check matches' if one else 'checks match'} no "
        f"known mistake or pattern; see {'its ✗ line' if one else 'the ✗ lines'} "
        f"(costs {points_text(points)})"
    )


def points_text(points: float) -> str:
    """ "1 point", "0.5 points", "2 points": a number of points in words."""
    return f"{points:g} point" + ("" if points == 1 else "s")


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
