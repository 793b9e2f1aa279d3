"""The outcomes scoring needs, memoised: evaluation computes them
(:mod:`autograder.scoring.evaluate`), this layer keeps them in memory and in the outcome cache on
disk (:mod:`autograder.scoring.cache`).

    reference_outcomes   expected outcomes of a function on its inputs
    mistake_outcomes     every catalogued mistake's outcomes (LazyMistakes: on first use)
    assignment_outcomes  inputs, points, expected outcomes and case outlines of an assignment,
                         read without importing its case module when the cache has them; in
                         the course form, from its values bundle (notebooks.course_values)
    function_specs       an assignment's FunctionSpecs: the case module's, or the course
                         form's outlines
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from autograder import assignments
from autograder.cases import seeds
from autograder.cases.spec import FunctionSpec
from autograder.notebooks import course_values, notebook
from autograder.scoring import cache, evaluate


class _Bounded(OrderedDict):
    """A dict that forgets its oldest entries: with per-student inputs every student adds
    keys, and a grading process must not grow with the number of students."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        while len(self) > self.size:
            self.popitem(last=False)


_EXPECTED: dict[tuple, list[dict]] = _Bounded(256)
_MUTANTS: dict[tuple, dict[str, list[dict]]] = _Bounded(64)


def _disk_key(assignment: str, name: str, digest: str, root: Path | None) -> dict:
    """The outcome cache's key: the inputs (``digest``: cache.inputs_digest) stand for the
    secret and the student they came from."""
    return {
        "format": cache.FORMAT,
        "assignment": assignment,
        "function": name,
        "code": cache.code_digest(assignment),
        "source": cache.file_digest(notebook.source_path(assignment, root)),
        "libraries": cache.library_versions(),
        "inputs": digest,
    }


def _parts(hidden: list[bool]) -> list[list[int]]:
    """The indices of the fixed cases, then those of the generated ones (empty parts left out).

    Outcomes are computed, cached and looked up one part at a time: the fixed cases are the
    same for every student, so their outcomes (the reference's, and every mistake's) are
    computed once for a class, and only the generated part once per student. Each case's
    outcome depends on its own inputs only (the reference and its mutants keep no state from
    one call to the next), so a case's outcome is the same whichever part it is computed in.
    """
    fixed = [i for i, h in enumerate(hidden) if not h]
    generated = [i for i, h in enumerate(hidden) if h]
    return [part for part in (fixed, generated) if part]


def _hidden(cases, inputs) -> list[bool]:
    """Which of ``inputs`` are generated cases' (all fixed when they are not ``cases``')."""
    if len(cases) != len(inputs):
        return [False] * len(inputs)
    return [bool(c.hidden) for c in cases]


def part_digests(inputs, hidden: list[bool]) -> list[str]:
    """cache.inputs_digest of each part of ``inputs`` (:func:`_parts`)."""
    return [cache.inputs_digest([inputs[i] for i in part]) for part in _parts(hidden)]


def _recent(memory: OrderedDict, key):
    """``memory[key]``, kept as the most recently used (None when absent): a class's fixed
    parts are asked for by every student and must outlive the students' own parts."""
    got = memory.get(key)
    if got is not None:
        memory.move_to_end(key)
    return got


def _by_part(
    kind: str,
    memory: OrderedDict,
    assignment: str,
    name: str,
    inputs,
    hidden: list[bool],
    root: Path | None,
    digests: list[str] | None,
    usable,
    compute,
) -> list[tuple[list[int], object]]:
    """(the case indices, the value) of each part of ``inputs`` (:func:`_parts`): from
    ``memory``, the outcome cache's ``kind`` entries (a value ``usable(value, cases)`` accepts
    for a part of that many cases), or ``compute(the part's inputs)``, then stored.
    ``digests``: :func:`part_digests`, when known."""
    parts = _parts(hidden)
    if digests is None or len(digests) != len(parts):
        digests = part_digests(inputs, hidden)
    out = []
    for part, digest in zip(parts, digests):
        key = (assignment, name, str(root), digest)
        got = _recent(memory, key)
        if got is None:
            disk = _disk_key(assignment, name, digest, root)
            got = cache.load(kind, disk)
            if not usable(got, len(part)):
                got = compute([inputs[i] for i in part])
                cache.store(kind, disk, got)
            memory[key] = got
        out.append((part, got))
    return out


def reference_outcomes(
    assignment: str,
    fspec: FunctionSpec,
    inputs,
    root: Path | None = None,
    digests: list[str] | None = None,
):
    """The reference's outcomes on ``inputs``: from memory, the outcome cache, or computed, a
    part at a time (:func:`_parts`). ``digests``: :func:`part_digests`, when known."""
    out: list = [None] * len(inputs)
    for part, got in _by_part(
        "reference",
        _EXPECTED,
        assignment,
        fspec.name,
        inputs,
        _hidden(fspec.cases, inputs),
        root,
        digests,
        lambda got, cases: isinstance(got, list) and len(got) == cases,
        lambda part: evaluate.reference_run(assignment, fspec.name, part, root),
    ):
        for i, outcome in zip(part, got):
            out[i] = outcome
    return out


def _mistakes(
    assignment: str,
    name: str,
    inputs,
    root: Path | None,
    ids: list[str],
    spec,
    digests: list[str] | None = None,
    hidden: list[bool] | None = None,
) -> dict[str, list[dict]]:
    """The outcomes of the mistakes ``ids`` of function ``name``: from memory, the outcome
    cache (an entry with exactly these ids), or computed with ``spec()``'s FunctionSpec, so
    the case module (for 05-06: torch) is imported only when they must be computed; a part
    at a time (:func:`_parts`; ``hidden``: which cases are generated, None: all fixed).
    ``digests``: :func:`part_digests`, when known."""
    if hidden is None or len(hidden) != len(inputs):
        hidden = [False] * len(inputs)

    def usable(got, cases: int) -> bool:
        return (
            isinstance(got, dict)
            and sorted(got) == sorted(ids)
            and all(isinstance(v, list) and len(v) == cases for v in got.values())
        )

    out: dict[str, list] = {m: [None] * len(inputs) for m in ids}
    for part, got in _by_part(
        "mistakes",
        _MUTANTS,
        assignment,
        name,
        inputs,
        hidden,
        root,
        digests,
        usable,
        lambda part: evaluate.mistakes_run(assignment, spec(), part, root),
    ):
        for m in ids:
            for i, outcome in zip(part, got[m]):
                out[m][i] = outcome
    return out


def mistake_outcomes(assignment: str, fspec: FunctionSpec, inputs, root: Path | None = None):
    """Every catalogued mistake's outcomes on ``inputs`` (memory, outcome cache, or computed)."""
    ids = [m.id for m in fspec.mistakes]
    hidden = _hidden(fspec.cases, inputs)
    return _mistakes(assignment, fspec.name, inputs, root, ids, lambda: fspec, hidden=hidden)


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
        digests: list[str] | None = None,
        hidden: list[bool] | None = None,
    ) -> None:
        self.assignment, self.function, self.inputs, self.root = assignment, function, inputs, root
        self.ids = ids  # the mistakes' ids, when known: a cached entry is used only if it has them
        self.digests = digests  # part_digests(inputs, hidden), when known: not encoded again
        self.hidden = hidden  # which cases are generated (None: computed as one part)
        self._data: dict[str, list[dict]] | None = None
        # computed once when two threads ask at once (a check server's warm-up and a check)
        self._lock = threading.Lock()

    def _spec(self) -> FunctionSpec:
        return assignments.get(self.assignment).function(self.function)

    def _outcomes(self) -> dict[str, list[dict]]:
        if self._data is not None:
            return self._data
        with self._lock:
            return self._compute()

    def _compute(self) -> dict[str, list[dict]]:
        if self._data is None:
            # With the ids known, a cached entry is read without importing the case module.
            ids = self.ids if self.ids is not None else [m.id for m in self._spec().mistakes]
            self._data = _mistakes(
                self.assignment,
                self.function,
                self.inputs,
                self.root,
                ids,
                self._spec,
                self.digests,
                self.hidden,
            )
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
    mutants: dict[str, Mapping[str, list[dict]]]  # LazyMistakes; course form: plain values
    # each function's probe inputs (scoring.relations), each with the reference's outcome on
    # it as "expected": run on the learner's code only when one of its checks failed
    probes: dict[str, list[dict]] = field(default_factory=dict)


_SPECS: dict[tuple[str, str], tuple[dict, FunctionSpec]] = _Bounded(64)


def _spec(assignment: str, name: str, outline: dict) -> FunctionSpec:
    """cache.spec_from_outline, built once for every student: each student's cached entry
    carries its function's outline (ids, weights, tolerances: the same for all of them), and
    an equal outline gives an equal spec (frozen, shared as the prepared one is)."""
    seen = _SPECS.get((assignment, name))
    if seen is not None and seen[0] == outline:
        return seen[1]
    spec = cache.spec_from_outline(outline)
    _SPECS[(assignment, name)] = (outline, spec)
    return spec


def assignment_outcomes(
    assignment: str, secret: str, student: str | None = None, root: Path | None = None
) -> AssignmentOutcomes:
    """Inputs, points, expected outcomes and case outlines of every graded function of
    ``assignment`` (generated inputs drawn for ``secret`` and ``student``)."""
    if course_values.active(root or notebook.course_root()):
        return _from_values(assignment, secret, student)
    key = cache.assignment_key(assignment, notebook.source_path(assignment, root), secret, student)
    hit = cache.load("assignment", key)
    specs = None
    if hit is not None:
        try:
            specs = {n: _spec(assignment, n, o) for n, o in hit["specs"].items()}
            names, points = list(hit["names"]), dict(hit["points"])
            inputs, expected = dict(hit["inputs"]), dict(hit["expected"])
            # each function's part digests, worked out when the entry was written (an
            # authenticated entry: as trusted as the inputs they stand for)
            digests = {n: [str(d) for d in hit["digests"][n]] for n in names}
        except (KeyError, TypeError, ValueError, AttributeError):
            specs = None
    if specs is None:
        spec = assignments.get(assignment)
        names = spec.names
        inputs, expected, points = {}, {}, {}
        digests = {}
        for f in spec.functions:
            inputs[f.name] = evaluate.materialize(assignment, f, secret, student)
            digests[f.name] = part_digests(inputs[f.name], _hidden(f.cases, inputs[f.name]))
            expected[f.name] = reference_outcomes(
                assignment, f, inputs[f.name], root, digests[f.name]
            )
            points[f.name] = notebook.points(assignment, f.name, root)
        specs = {f.name: f for f in spec.functions}
        try:
            outlines = {n: cache.spec_outline(f) for n, f in specs.items()}
        except cache.NotOutlined:
            outlines = None  # scored from the real spec every time: slower, never wrong
        if outlines is not None:
            value = {
                "names": names,
                "points": points,
                "inputs": inputs,
                "expected": expected,
                "digests": digests,
            }
            cache.store("assignment", key, dict(value, specs=outlines))
    mutants = {
        n: LazyMistakes(
            assignment,
            n,
            inputs[n],
            root,
            [m.id for m in specs[n].mistakes],
            digests[n],
            _hidden(specs[n].cases, inputs[n]),
        )
        for n in names
    }
    probes = LazyProbes(assignment, secret, student, inputs, root)
    return AssignmentOutcomes(names, points, inputs, expected, specs, mutants, probes)


def probes_with_reference(
    assignment: str,
    fspec: FunctionSpec,
    secret: str,
    student: str | None,
    inputs: list[dict],
    root: Path | None = None,
) -> list[dict]:
    """``fspec``'s probe inputs (scoring.relations) for these case ``inputs``, each with the
    reference's outcome on it as "expected"."""
    from autograder.scoring import relations  # numpy: not at import (a warm check needs none)

    changed = relations.probe_inputs(assignment, fspec, secret, student, inputs)
    if not changed:
        return []
    want = evaluate.reference_run(assignment, fspec.name, changed, root)
    return [dict(p, expected=e) for p, e in zip(changed, want)]


class LazyProbes(Mapping):
    """Each function's probe inputs (scoring.relations), each with the reference's outcome
    on it as "expected", computed the first time a submission fails one of the function's
    checks (a right submission never needs them: tens of milliseconds per draw saved)."""

    def __init__(self, assignment: str, secret: str, student: str | None, inputs, root) -> None:
        self.assignment, self.secret, self.student = assignment, secret, student
        self.inputs, self.root = inputs, root
        self._data: dict[str, list[dict]] = {}
        self._lock = threading.Lock()

    def __getitem__(self, name: str) -> list[dict]:
        if name not in self.inputs:
            raise KeyError(name)
        with self._lock:
            if name not in self._data:
                self._data[name] = self._compute(name)
            return self._data[name]

    def _compute(self, name: str) -> list[dict]:
        fspec = assignments.get(self.assignment).function(name)
        return probes_with_reference(
            self.assignment, fspec, self.secret, self.student, self.inputs[name], self.root
        )

    def __contains__(self, name: object) -> bool:  # without computing (Mapping's would)
        return name in self.inputs

    def __iter__(self) -> Iterator[str]:
        return iter(self.inputs)

    def __len__(self) -> int:
        return len(self.inputs)


def _from_values(assignment: str, secret: str, student: str | None) -> AssignmentOutcomes:
    """The course form's outcomes: the values bundle's, computed by the full form on the public
    draw. Another draw (a course secret, a student's own inputs) needs the reference, which the
    course form does not hold: refused with a sentence."""
    if secret != seeds.PUBLIC_DEFAULT_SECRET or student is not None:
        raise course_values.CourseFormError(
            "the course form checks on the public draw only (no course secret, no student "
            "id): its values were computed there, and another draw needs the reference "
            "solutions, which only the instructor's full form holds (unset DRILLS_SECRET, "
            "leave out --student)"
        )
    body = course_values.bundle(assignment)
    names = list(body["names"])
    specs = {n: _spec(assignment, n, body["specs"][n]) for n in names}
    mutants = {n: dict(body["mistakes"][n]) for n in names}
    return AssignmentOutcomes(
        names,
        {n: float(p) for n, p in body["points"].items()},
        {n: list(body["inputs"][n]) for n in names},
        {n: list(body["expected"][n]) for n in names},
        specs,
        mutants,
        {n: list((body.get("probes") or {}).get(n, [])) for n in names},
    )


def function_specs(assignment: str, root: Path | None = None) -> dict[str, FunctionSpec]:
    """The FunctionSpecs of ``assignment``'s graded functions, by name, in order: the case
    module's, or in the course form the outlines its values bundle holds (enough to read a
    tolerance or a case's kind; their generators and formulas raise if called)."""
    if course_values.active(root or notebook.course_root()):
        body = course_values.bundle(assignment)
        return {n: _spec(assignment, n, body["specs"][n]) for n in body["names"]}
    return {f.name: f for f in assignments.get(assignment).functions}
