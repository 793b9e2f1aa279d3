"""Running the cases of a graded function, scoring, and recognising known mistakes.

The pipeline, in order (each step works on encoded values, see codec):

    materialize   case inputs, fixed or generated from the seed
    reference     expected outcomes: the source notebook's solution on those inputs
    learner       the learner's outcomes (in the kernel, or in the sandboxed child)
    score         verdict per case; score = points x weighted fraction passed, 2 decimals
    diagnose      which catalogued mistake the learner's outcomes match, if any
"""

from __future__ import annotations

import contextlib
import io
import time
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from autograder import assignments, reference, seeds
from autograder.codec import encode, outcome_of
from autograder.compare import render_outcome, same_outcome
from autograder.spec import Case, FunctionSpec, Mistake


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


@dataclass
class FunctionResult:
    assignment: str
    function: str
    points: float
    score: float
    fraction: float
    attempted: bool
    cases: list[CaseResult] = field(default_factory=list)
    mistake: str | None = None  # id of the recognised mistake
    diagnosis: str | None = None
    error: str | None = None  # the whole function could not be graded (missing, crashed run)

    @property
    def passed(self) -> int:
        return sum(c.passed for c in self.cases)

    def to_json(self, show_hidden: bool = False) -> dict:
        d = asdict(self)
        for c in d["cases"]:
            if c["hidden"] and not show_hidden:
                c["inputs"] = None
        return d


# -- materialize -------------------------------------------------------------------------------


def materialize(assignment: str, fspec: FunctionSpec, secret: str, student: str | None = None):
    """Encoded inputs of every case: [{"id", "args", "kwargs"}]."""
    out = []
    for case in fspec.cases:
        if case.make is not None:
            rng = seeds.case_rng(secret, assignment, f"{fspec.name}/{case.id}", student)
            args = tuple(case.make(rng))
        else:
            args = case.args
        out.append({"id": case.id, "args": encode(list(args)), "kwargs": encode(dict(case.kwargs))})
    return out


# -- running functions -------------------------------------------------------------------------


@contextlib.contextmanager
def silenced():
    """No warnings and no stderr: under nbgrader any stderr output scores the cell 0."""
    import numpy as np

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        with contextlib.redirect_stderr(io.StringIO()):
            yield


def run_cases(fn, inputs: list[dict], namespace: dict) -> tuple[list[dict], list[float]]:
    """Outcomes and seconds of ``fn`` on every case (inputs decoded afresh for each call)."""
    outcomes, times = [], []
    with silenced():
        for inp in inputs:
            t0 = time.perf_counter()
            outcomes.append(outcome_of(fn, inp["args"], inp["kwargs"], namespace))
            times.append(time.perf_counter() - t0)
    return outcomes, times


_EXPECTED: dict[tuple, list[dict]] = {}
_MUTANTS: dict[tuple, dict[str, list[dict]]] = {}


def _key(assignment, fspec, inputs, root):
    import json

    return (assignment, fspec.name, str(root), json.dumps(inputs, sort_keys=True))


def _disk_key(assignment: str, name: str, inputs, root: Path | None) -> dict:
    """The outcome cache's key: the inputs stand for the secret and the student they came from."""
    from autograder import cache, notebook

    return {
        "format": cache.FORMAT,
        "assignment": assignment,
        "function": name,
        "code": cache.code_digest(assignment),
        "source": cache.file_digest(notebook.source_path(assignment, root)),
        "libraries": cache.library_versions(),
        "inputs": cache.inputs_digest(inputs),
    }


def reference_outcomes(assignment: str, fspec: FunctionSpec, inputs, root: Path | None = None):
    """The reference's outcomes on ``inputs``: from memory, the outcome cache, or computed."""
    from autograder import cache

    key = _key(assignment, fspec, inputs, root)
    if key not in _EXPECTED:
        disk = _disk_key(assignment, fspec.name, inputs, root)
        got = cache.load("reference", disk)
        if got is None:
            ns = reference.namespace(assignment, root)
            got = run_cases(ns[fspec.name], inputs, ns)[0]
            cache.store("reference", disk, got)
        _EXPECTED[key] = got
    return _EXPECTED[key]


def mistake_outcomes(assignment: str, fspec: FunctionSpec, inputs, root: Path | None = None):
    """Every catalogued mistake's outcomes on ``inputs`` (memory, outcome cache, or computed)."""
    from autograder import cache

    key = _key(assignment, fspec, inputs, root)
    if key not in _MUTANTS:
        disk = _disk_key(assignment, fspec.name, inputs, root)
        got = cache.load("mistakes", disk)
        if got is None or sorted(got) != sorted(m.id for m in fspec.mistakes):
            ns = reference.namespace(assignment, root)
            got = {m.id: run_cases(m.build(ns), inputs, ns)[0] for m in fspec.mistakes}
            cache.store("mistakes", disk, got)
        _MUTANTS[key] = got
    return _MUTANTS[key]


class LazyMistakes(Mapping):
    """The catalogued mistakes' outcomes of one function, computed on first use.

    A correct submission never needs them (``score`` only diagnoses failures), so
    they are computed, or read from the outcome cache, the first time a
    submission fails this function.
    """

    def __init__(
        self,
        assignment: str,
        function: str,
        inputs,
        root: Path | None = None,
        ids: list[str] | None = None,
    ) -> None:
        self.assignment, self.function, self.inputs, self.root = assignment, function, inputs, root
        self.ids = ids  # the mistakes' ids, when known: a cached entry is used only if it has them
        self._data: dict[str, list[dict]] | None = None

    def _outcomes(self) -> dict[str, list[dict]]:
        from autograder import cache

        if self._data is None and self.ids is not None:
            # From the cache, without importing the case module (for 05-06: torch).
            got = cache.load(
                "mistakes", _disk_key(self.assignment, self.function, self.inputs, self.root)
            )
            if got is not None and sorted(got) == sorted(self.ids):
                self._data = got
        if self._data is None:
            fspec = assignments.get(self.assignment).function(self.function)
            self._data = mistake_outcomes(self.assignment, fspec, self.inputs, self.root)
        return self._data

    def __getitem__(self, mistake_id: str) -> list[dict]:
        return self._outcomes()[mistake_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._outcomes())

    def __len__(self) -> int:
        return len(self._outcomes())


@dataclass
class AssignmentOutcomes:
    """What scoring an assignment needs, for one secret (and student): read from the cache
    when it can be, so a warm check imports neither the case module nor numpy or torch."""

    names: list[str]
    points: dict[str, float]
    inputs: dict[str, list[dict]]
    expected: dict[str, list[dict]]
    specs: dict[str, FunctionSpec]  # outlines: ids, weights, tolerances, notes; no generators
    mutants: dict[str, LazyMistakes]


def assignment_outcomes(
    assignment: str, secret: str, student: str | None = None, root: Path | None = None
) -> AssignmentOutcomes:
    """Inputs, points, expected outcomes and case outlines of every graded function of
    ``assignment`` (generated inputs drawn for ``secret`` and ``student``)."""
    from autograder import cache, notebook

    key = cache.assignment_key(assignment, notebook.source_path(assignment, root), secret, student)
    hit = cache.load("assignment", key)
    specs = None
    if hit is not None:
        try:
            specs = {n: cache.spec_from_outline(o) for n, o in hit["specs"].items()}
            names, points = list(hit["names"]), dict(hit["points"])
            inputs, expected = dict(hit["inputs"]), dict(hit["expected"])
        except (KeyError, TypeError, ValueError, AttributeError):
            specs = None
    if specs is None:
        spec = assignments.get(assignment)
        names = spec.names
        inputs, expected, points = {}, {}, {}
        for f in spec.functions:
            inputs[f.name] = materialize(assignment, f, secret, student)
            expected[f.name] = reference_outcomes(assignment, f, inputs[f.name], root)
            points[f.name] = notebook.points(assignment, f.name, root)
        specs = {f.name: f for f in spec.functions}
        try:
            outlines = {n: cache.spec_outline(f) for n, f in specs.items()}
        except cache.NotOutlined:
            outlines = None  # scored from the real spec every time: slower, never wrong
        if outlines is not None:
            value = {"names": names, "points": points, "inputs": inputs, "expected": expected}
            cache.store("assignment", key, dict(value, specs=outlines))
    mutants = {
        n: LazyMistakes(assignment, n, inputs[n], root, [m.id for m in specs[n].mistakes])
        for n in names
    }
    return AssignmentOutcomes(names, points, inputs, expected, specs, mutants)


# -- scoring and diagnosis ---------------------------------------------------------------------


def _equal_for_matching(case: Case, a: dict, b: dict) -> bool:
    """Do two wrong outcomes look like the same mistake on this case?"""
    if "raised" in a and "raised" in b:
        return a["raised"] == b["raised"]
    return same_outcome(a, b, case.rtol, case.atol) and same_outcome(b, a, case.rtol, case.atol)


def _missed_error(case: Case, expected: dict, got: dict) -> bool:
    """The case wanted an error and the outcome is something else (value or another error)."""
    return "raised" in expected and got.get("raised") != expected["raised"]


def diagnose(
    fspec: FunctionSpec, expected: list[dict], got: list[dict], mutants: dict[str, list[dict]]
) -> Mistake | None:
    """The catalogued mistake whose wrong outcomes the learner's reproduce.

    A mistake matches when, on every case where the mistake fails, the learner
    fails the same way (same value within tolerance, or, on a case that should
    raise, also fails to raise). Among full matches the one failing the most
    cases wins (the most specific); otherwise the best partial match that
    explains at least half of the learner's failures and half of its own.
    """
    failed = [
        i
        for i, c in enumerate(fspec.cases)
        if not same_outcome(expected[i], got[i], c.rtol, c.atol)
    ]
    if not failed:
        return None
    best: tuple[float, int, int, Mistake] | None = None
    for order, m in enumerate(fspec.mistakes):
        mo = mutants[m.id]
        m_failed = [
            i
            for i, c in enumerate(fspec.cases)
            if not same_outcome(expected[i], mo[i], c.rtol, c.atol)
        ]
        if not m_failed:
            continue
        agree = 0
        for i in m_failed:
            c = fspec.cases[i]
            if _missed_error(c, expected[i], mo[i]) and _missed_error(c, expected[i], got[i]):
                agree += 1
            elif _equal_for_matching(c, mo[i], got[i]):
                agree += 1
        own = agree / len(m_failed)
        explained = agree / len(failed)
        if own < 0.5 or explained < 0.5:
            continue
        rank = (own, len(m_failed) if own == 1.0 else agree, -order, m)
        if best is None or rank[:3] > best[:3]:
            best = rank
    return best[3] if best else None


def score(
    assignment: str,
    fspec: FunctionSpec,
    points: float,
    inputs: list[dict],
    expected: list[dict],
    got: list[dict],
    times: list[float] | None,
    mutants: dict[str, list[dict]],
) -> FunctionResult:
    times = times or [0.0] * len(inputs)
    cases = []
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
            )
        )
    attempted = not all(g.get("raised") == "NotImplementedError" for g in got)
    total = sum(c.weight for c in fspec.cases)
    fraction = sum(c.weight for c in cases if c.passed) / total if attempted and total else 0.0
    result = FunctionResult(
        assignment=assignment,
        function=fspec.name,
        points=points,
        score=round(points * fraction, 2),
        fraction=fraction,
        attempted=attempted,
        cases=cases,
    )
    if attempted and fraction < 1.0:
        m = diagnose(fspec, expected, got, mutants)
        if m is not None:
            result.mistake, result.diagnosis = m.id, m.diagnosis
    return result


def grade_function(
    assignment: str,
    name: str,
    fn,
    namespace: dict | None = None,
    points: float | None = None,
    secret: str | None = None,
    student: str | None = None,
    root: Path | None = None,
) -> FunctionResult:
    """Grade one function object in this process (the in-kernel engine)."""
    from autograder import notebook

    fspec = assignments.get(assignment).function(name)
    pts = float(points) if points is not None else notebook.points(assignment, name, root)
    inputs = materialize(assignment, fspec, seeds.course_secret(secret), student)
    expected = reference_outcomes(assignment, fspec, inputs, root)
    ns = namespace if namespace is not None else getattr(fn, "__globals__", {})
    got, times = run_cases(fn, inputs, ns)
    return score(
        assignment,
        fspec,
        pts,
        inputs,
        expected,
        got,
        times,
        LazyMistakes(assignment, name, inputs, root),
    )


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
    failed = [c for c in r.cases if not c.passed]
    for c in failed[:max_cases]:
        label = c.note or c.id
        lines.append(f"  ✗ {c.id}: {label}")
        if not c.hidden or show_hidden:
            lines.append(f"      inputs:   {_render_inputs(c.inputs)}")
        lines.append(f"      expected: {render_outcome(c.expected)}")
        lines.append(f"      got:      {render_outcome(c.got)}")
    if len(failed) > max_cases:
        lines.append(f"  … and {len(failed) - max_cases} more failed checks")
    if r.diagnosis:
        lines.append(f"  Recognised mistake: {r.diagnosis}")
    return "\n".join(lines)


def _render_inputs(inputs: Any) -> str:
    from autograder.compare import render

    if not inputs:
        return "(hidden)"
    parts = [render(a, 60) for a in inputs.get("args", [])]
    kw = inputs.get("kwargs") or {}
    parts += [
        f"{k}={render(v, 40)}"
        for k, v in (kw.get("$dict", {}) if isinstance(kw, dict) else {}).items()
    ]
    return ", ".join(parts)
