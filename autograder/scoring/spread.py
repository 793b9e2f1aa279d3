"""How much a function body's score moves with the draw (the student id and the course secret).

Generated cases differ per student and per secret; a mistake that failed only some draws of a
case would cost some students more than others. The case modules draw each generated case so
that it always holds the situations it stands for (``assignments.common.until``, fixed layouts
in 04), and this module measures what is left: the same body graded on many draws, in this
process, with the scoring every engine uses (``evaluate.weighted_fraction``). The fixed cases'
outcomes are the same for every draw, so they are computed once.

``tests/test_score_spread.py`` holds every catalogued mistake within
:data:`BAND` of the function's points over :data:`TEST_DRAWS` draws;
``benchmarks/score_spread.py`` prints the table for every mistake and field port.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from autograder import assignments
from autograder.cases.compare import same_outcome
from autograder.notebooks import notebook, reference
from autograder.scoring import evaluate

BAND = 0.01  # of a function's points: the most a score may move with the draw (DESIGN.md: 1 %)
TEST_DRAWS = 20


def draws(n: int, prefix: str = "spread") -> list[tuple[str, str]]:
    """``n`` (course secret, student id) pairs, each a new secret and a new student."""
    return [(f"{prefix}-secret-{i}", f"{prefix}-student-{i}") for i in range(n)]


@dataclass
class Spread:
    """One body's scores over the draws."""

    name: str
    points: float
    scores: list[float]

    @property
    def low(self) -> float:
        return min(self.scores)

    @property
    def high(self) -> float:
        return max(self.scores)

    @property
    def width(self) -> float:
        return round(self.high - self.low, 2)

    @property
    def within_band(self) -> bool:
        return self.width <= BAND * self.points + 1e-9


def spreads(
    assignment: str,
    function: str,
    bodies: dict[str, Callable[[dict], Callable]],
    pairs: Iterable[tuple[str, str | None]],
    root: Path | None = None,
) -> list[Spread]:
    """The score of each body (``name -> namespace -> function``, like ``Mistake.build``) on
    every (secret, student) draw in ``pairs``."""
    fspec = assignments.get(assignment).function(function)
    points = notebook.points(assignment, function, root)
    ns = reference.namespace(assignment, root)
    built = {name: build(ns) for name, build in bodies.items()}
    fixed = [i for i, c in enumerate(fspec.cases) if not c.hidden]
    hidden = [i for i, c in enumerate(fspec.cases) if c.hidden]
    pairs = list(pairs)
    base = evaluate.materialize(assignment, fspec, *pairs[0])
    fixed_inputs = [base[i] for i in fixed]
    expected_fixed = evaluate.run_cases(ns[function], fixed_inputs, ns)[0]
    passed_fixed = {
        name: _passed(fspec, fixed, expected_fixed, evaluate.run_cases(fn, fixed_inputs, ns)[0])
        for name, fn in built.items()
    }
    scores: dict[str, list[float]] = {name: [] for name in built}
    for secret, student in pairs:
        inputs = evaluate.materialize(assignment, fspec, secret, student)
        drawn = [inputs[i] for i in hidden]
        expected = evaluate.run_cases(ns[function], drawn, ns)[0]
        for name, fn in built.items():
            passed = dict(passed_fixed[name])
            passed.update(_passed(fspec, hidden, expected, evaluate.run_cases(fn, drawn, ns)[0]))
            fraction = evaluate.weighted_fraction(
                fspec, [passed[i] for i in range(len(fspec.cases))]
            )
            scores[name].append(round(points * fraction, 2))
    return [Spread(name, points, s) for name, s in scores.items()]


def _passed(fspec, idx: list[int], expected: list[dict], got: list[dict]) -> dict[int, bool]:
    return {
        i: same_outcome(e, g, fspec.cases[i].rtol, fspec.cases[i].atol)
        for i, e, g in zip(idx, expected, got)
    }


def catalogue(assignment: str, function: str) -> dict[str, Callable[[dict], Callable]]:
    """Every catalogued mistake of ``function`` as a body to measure."""
    return {m.id: m.build for m in assignments.get(assignment).function(function).mistakes}
