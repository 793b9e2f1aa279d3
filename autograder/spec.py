"""How the cases and the known mistakes of a graded function are written down.

A :class:`Case` is either fixed (``args`` given, public: its inputs appear in
feedback) or generated (``make`` given: inputs drawn from a generator seeded by
the course secret, the assignment and the case id; hidden in feedback).
Expected values are never written here: they come from running the reference
solution of the source notebook on the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only an annotation: `import autograder` must not import numpy
    import numpy as np

DEFAULT_RTOL = 1e-9
DEFAULT_ATOL = 1e-12


@dataclass(frozen=True)
class Obj:
    """An instance of a type defined in the notebook's setup cells, e.g. ``Turn``.

    Cases cannot import notebook types, so they name them; the type is looked
    up in the namespace that runs the function (reference or learner).
    """

    type_name: str
    fields: Mapping[str, Any]

    @staticmethod
    def of(type_name: str, **fields: Any) -> Obj:
        return Obj(type_name, dict(fields))


@dataclass(frozen=True)
class Fn:
    """A function passed as an input (e.g. the estimator of ``estimator_moments``).

    Given as source text of one expression (a lambda) that may use ``math``, ``np``
    and ``torch``, so that it crosses into the sandbox as plain JSON. It is
    trusted: it comes from the case module, never from the learner.
    """

    name: str
    source: str


@dataclass(frozen=True)
class Case:
    id: str  # stable: part of the seed of generated inputs
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    make: Callable[[np.random.Generator], tuple] | None = None  # generated positional args
    raises: type[Exception] | None = None  # the reference raises this (documentation + test)
    weight: float = 1.0
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    note: str = ""  # what the case checks, shown to learners

    @property
    def hidden(self) -> bool:
        return self.make is not None


@dataclass(frozen=True)
class Mistake:
    """A known wrong implementation and the diagnosis shown when a learner matches it."""

    id: str
    diagnosis: str  # second person, says what was done: "you averaged ... without weights"
    build: Callable[[dict], Callable]  # reference namespace -> mutant function


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    cases: tuple[Case, ...]
    mistakes: tuple[Mistake, ...] = ()

    def __post_init__(self) -> None:
        ids = [c.id for c in self.cases]
        if len(ids) != len(set(ids)):
            raise ValueError(f"{self.name}: duplicate case ids")
        mids = [m.id for m in self.mistakes]
        if len(mids) != len(set(mids)):
            raise ValueError(f"{self.name}: duplicate mistake ids")


@dataclass(frozen=True)
class AssignmentSpec:
    id: str  # e.g. "01_exact_kl"
    functions: tuple[FunctionSpec, ...]

    def function(self, name: str) -> FunctionSpec:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(f"{self.id} has no graded function {name!r}")

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.functions]
