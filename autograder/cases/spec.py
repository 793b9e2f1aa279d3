"""How the cases and the known mistakes of a graded function are written down.

A :class:`Case` is either fixed (``args`` given, public: its inputs appear in
feedback) or generated (``make`` given: inputs drawn from a generator seeded by
the course secret, the assignment and the case id; hidden in feedback).
Expected values are not written here: they come from running the reference
solution of the source notebook on the same inputs. A fixed case may carry an
*anchor* (``expected=`` with ``anchor=``, where the number comes from): a value
computed by hand or from the paper, independently of the reference, that the
reference must reproduce within the function's tolerance
(``autograder.scoring.anchors``, ``tests/test_anchors.py``). Anchors are checked
by the tests only; grading still compares with the reference's own output.

Every case has a kind, and each function splits its points between the kinds
(:class:`Split`):

    value     the formula on valid inputs, canonical and generated (the default)
    edge      a stated edge rule: zeros, infinities, empty rows where defined, ties,
              eps = 0, equal inputs ... (marked ``kind="edge"``)
    invalid   the input must raise (derived from ``raises``)
    gradient  the gradient the result gives (``kind="gradient"``): only for a function whose
              result is differentiated (a loss, or a tensor that enters one). The case calls the
              function on its inputs with every input named in ``FunctionSpec.with_gradient`` or
              ``FunctionSpec.detached`` made a leaf that requires grad (each call gets a clone of
              the leaf, as a model's output would be), calls ``.backward()`` on the result (a
              0-d result) or on a fixed pseudo-random linear functional of it (Σ w·result, ``w``
              from a seeded generator, the same in every process: codec.GRADIENT_SEED), and
              returns, per input, the gradient for those marked "with gradient" (compared with
              the reference's within the function's tolerance; no gradient at all counts as a
              zero gradient) and, for those marked "detached", whether any gradient reached
              them: it passes when ``.grad`` is None or exactly zero everywhere.

A :class:`Mistake` is one declarative entry: an id, the diagnosis, and the
wrong ``formula`` (called with the graded function's arguments, defaults filled
in, after the reference has validated them), or a ``build`` for the mistakes
that are about validation itself (see ``autograder.notebooks.source.unchecked``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only an annotation: `import autograder` must not import numpy
    import numpy as np

# The stated tolerance of a function unless its FunctionSpec says otherwise: wide enough for
# float32 arithmetic and a 1e-8 … 1e-6 stabiliser in a denominator (relative errors of 1e-7 …
# 1e-6), narrow enough that every catalogued mistake stays outside (tests/test_field_maths.py).
DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 1e-6

KINDS = ("value", "edge", "invalid", "gradient")
KIND_LABELS = {
    "value": "the formula",
    "edge": "edge cases",
    "invalid": "input checks",
    "gradient": "the gradient",
}
MAX_INVALID_SHARE = 20  # percent: input checks never outweigh the formula
NO_SOURCE = "common slip (no source found)"
# What `drills new-function` writes where the author has something to fill in (a string, so a
# scaffolded case module still imports); tests/test_scaffold.py fails while one is left.
TODO = "TODO(scaffold)"


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


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()  # a Case without an anchor (None is a value a function may return)


@dataclass(frozen=True)
class Case:
    id: str  # stable: part of the seed of generated inputs
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    make: Callable[[np.random.Generator], tuple] | None = None  # generated positional args
    raises: type[Exception] | None = None  # the reference raises this (documentation + test)
    weight: float = 1.0  # within its kind
    rtol: float | None = None  # None: the function's stated tolerance (FunctionSpec.rtol)
    atol: float | None = None
    note: str = ""  # what the case checks, shown to learners
    # edge and invalid cases: words of the stated rule the case checks, as the function's
    # description in the notebook says them (filled from assignments/rules.py by FunctionSpec)
    rule: str = ""
    # "value" | "edge" | "invalid" | "gradient"; "" derives it: invalid when raises, else value
    kind: str = ""
    # An independent anchor for the reference: the value the function must return on ``args``,
    # computed by hand (fractions, math) or taken from the paper or the notebook's worked
    # example, never by calling the reference; ``anchor`` says where it comes from. Numbers,
    # (nested) lists of numbers, None, strings and Obj values (compared field by field).
    expected: Any = UNSET
    anchor: str = ""

    def __post_init__(self) -> None:
        if self.expected is not UNSET:
            if self.make is not None or self.raises is not None:
                raise ValueError(f"case {self.id}: only a fixed case that returns can be anchored")
            if not self.anchor:
                raise ValueError(
                    f"case {self.id}: expected= needs anchor= saying where the value comes from"
                )
        kind = self.kind or ("invalid" if self.raises is not None else "value")
        if kind not in KINDS:
            raise ValueError(f"case {self.id}: kind {kind!r} is not one of {KINDS}")
        if (kind == "invalid") != (self.raises is not None):
            raise ValueError(f"case {self.id}: a case is of kind 'invalid' exactly when it raises")
        if self.weight <= 0:
            raise ValueError(f"case {self.id}: weight must be > 0")
        object.__setattr__(self, "kind", kind)

    @property
    def hidden(self) -> bool:
        return self.make is not None

    @property
    def anchored(self) -> bool:
        return self.expected is not UNSET


@dataclass(frozen=True)
class Split:
    """How a function's points are shared between case kinds, in whole percent.

    The default is the formula 70 %, edge cases 15 %, input checks 15 % (no gradient
    cases). Any other split needs a ``reason`` (shown in the notebook); input checks never
    weigh more than 20 %. A function whose result is differentiated gives its gradient cases
    a share (:data:`GRADIENT_SPLIT`).
    """

    value: int = 70
    edge: int = 15
    invalid: int = 15
    reason: str = ""
    gradient: int = 0

    def share(self, kind: str) -> int:
        return int(getattr(self, kind))

    @property
    def is_default(self) -> bool:
        return (self.value, self.edge, self.invalid, self.gradient) == (70, 15, 15, 0)

    def text(self) -> str:
        """The shares in words, e.g. "the formula 70 %, edge cases 15 %, input checks 15 %"."""
        return ", ".join(f"{KIND_LABELS[k]} {self.share(k)} %" for k in KINDS if self.share(k))


def grading_line(
    function: str, points: float, split: Split, tolerance: tuple[float, float] | None = None
) -> str:
    """The line under each graded function in its notebook (tests keep the two in sync), with
    the stated tolerance ``(rtol, atol)`` when given."""
    line = f"**How `{function}` is graded** ({points:g} points): {split.text()}."
    line += f" {split.reason}." if split.reason else ""
    return line + (" " + tolerance_text(*tolerance) if tolerance else "")


def tolerance_text(rtol: float, atol: float) -> str:
    """The stated tolerance in words, as the notebook gives it beside the grading line."""
    return (
        f"A value passes when |yours − expected| ≤ {atol:g} + {rtol:g} · |expected|: "
        "float32 arithmetic and a stabiliser of 1e-8 … 1e-6 added to a denominator fit "
        "inside it, every catalogued mistake falls outside."
    )


DEFAULT_SPLIT = Split()
# The split of a function whose result is differentiated (a loss, or a tensor that enters one):
# its gradient is what it is for, so a fifth of its points go to the gradient cases.
GRADIENT_REASON = (
    "Its result is differentiated in training, so the gradient is graded too: `.backward()` on "
    "the result, the gradient for each input marked with gradient compared with the reference's "
    "(same tolerance), none allowed into an input marked detached"
)
GRADIENT_SPLIT = Split(55, 15, 10, GRADIENT_REASON, gradient=20)


def _k3_log_ratio_bound(v: float) -> float:
    """The c > 0 with exp(c) − 1 − c = v: the log-ratio clamp behind a saturated k3 value."""
    import math

    lo, hi = 0.0, 1.0
    while math.expm1(hi) - hi < v and hi < 700:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.expm1(mid) - mid < v else (lo, mid)
    return (lo + hi) / 2


def _k3_saturations(c: float) -> tuple[float, ...]:
    import math

    return (math.expm1(c) - c, math.expm1(-c) + c)


# The largest |value| a clamped learner returns -> the constant they clamped at; and the
# |values| a clamp at c can return where it acts (a learner whose differing values are all
# among them clamped at c).
BOUND_INVERSES: dict[str, Callable[[float], float]] = {
    "value": lambda v: v,
    "half-square": lambda v: (2 * v) ** 0.5,
    "k3-log-ratio": _k3_log_ratio_bound,
}
BOUND_SATURATIONS: dict[str, Callable[[float], tuple[float, ...]]] = {
    "value": lambda c: (c,),
    "half-square": lambda c: (0.5 * c * c,),
    "k3-log-ratio": _k3_saturations,
}


@dataclass(frozen=True)
class Mistake:
    """A known wrong implementation and the diagnosis shown when a learner matches it.

    Give exactly one of:

    - ``formula``: the wrong computation, called as ``formula(*args)`` with the graded
      function's arguments in order, its defaults filled in, after the reference has
      been called on the same arguments (so the mutant raises where the reference
      raises and differs only in the value). A formula that declares a parameter
      ``ns`` also receives the reference namespace (to reuse provided types or the
      reference's other functions).
    - ``unchecked``: the reference itself with its ``raise ValueError`` checks removed:
      ``True`` for all of them, or words (``("beta",)``) naming the checks to remove
      (those whose ``if`` test or message mentions a word). A validation mistake.
    - ``build``: ``namespace -> function``, for what neither can say.

    ``validation`` marks a mistake about input checks: its failures are all on
    invalid cases (tests/test_cases.py checks it), it is matched on invalid cases
    only, and shown after any conceptual diagnosis.
    ``source`` names where the mistake is documented (an issue, a fix, a paper, a
    course's errata), or :data:`NO_SOURCE`.
    """

    id: str
    diagnosis: str  # second person, says what was done and what to change
    build: Callable[[dict], Callable] | None = None  # reference namespace -> mutant function
    formula: Callable[..., Any] | None = None
    unchecked: bool | tuple[str, ...] = False
    validation: bool = False
    source: str = ""
    function: str = ""  # the graded function, filled in by FunctionSpec
    # A clamp (or another constant the learner picks): ``bound`` is the constant of the
    # catalogued mutant, written in ``diagnosis`` as f"{bound:g}"; ``bound_of`` maps the
    # largest |value| a learner returned where the clamp acts to the learner's own constant, so
    # the feedback names the bound the learner used and the mistake is recognised at any bound.
    bound: float | None = None
    bound_of: str = ""  # a key of BOUND_INVERSES
    # The diagnosis says what the code returns on *every* input (an argument compared with a
    # fixed constant whatever its value: "you compared with 0 whatever eps is"), which leaves
    # no room for "something else differs as well" on the checks the mistake fails: a check
    # where the learner's outcome is not the mistake's contradicts the words. Such a mistake
    # is named only where the learner reproduces it on every check it fails.
    exact: bool = False

    def __post_init__(self) -> None:
        given = [x for x in (self.build, self.formula, self.unchecked or None) if x is not None]
        if len(given) != 1 and not self.function:  # once bound, build is derived from the others
            raise ValueError(f"mistake {self.id}: give exactly one of formula=, unchecked=, build=")
        if self.unchecked:
            object.__setattr__(self, "validation", True)

    def bound_to(self, function: str) -> Mistake:
        """This mistake for ``function``: a ``formula`` or ``unchecked`` becomes a ``build``."""
        if self.formula is not None:
            return replace(
                self, function=function, build=_validated_formula(function, self.formula)
            )
        if self.unchecked:
            words = () if self.unchecked is True else tuple(self.unchecked)
            return replace(self, function=function, build=_unchecked(function, words))
        return replace(self, function=function)


def _unchecked(function: str, words: tuple[str, ...]) -> Callable[[dict], Callable]:
    def build(ns: dict) -> Callable:
        from autograder.notebooks import source

        return source.unchecked(ns, function, words)

    return build


def _validated_formula(function: str, formula: Callable[..., Any]) -> Callable[[dict], Callable]:
    wants_ns = "ns" in inspect.signature(formula).parameters

    def build(ns: dict) -> Callable:
        reference = ns[function]  # looked up now: a test may put a variant in its place
        signature = inspect.signature(reference)

        def mutant(*args, **kwargs):
            reference(*args, **kwargs)  # raise where the reference raises
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            if wants_ns:
                return formula(*bound.args, ns=ns)
            return formula(*bound.args)

        mutant.__name__ = function
        return mutant

    return build


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    cases: tuple[Case, ...]
    mistakes: tuple[Mistake, ...] = ()
    split: Split = DEFAULT_SPLIT
    # The stated tolerance: a value passes when |got − expected| <= atol + rtol · |expected|.
    # Wide enough for correct maths as the field writes it (float32 arithmetic, a 1e-8 … 1e-6
    # stabiliser in a denominator), narrow enough that every catalogued mistake stays outside
    # (tests/test_field_maths.py proves both). The notebook states it (grading_line).
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    # Independent anchors, by case id: (the expected value computed by hand or taken from the
    # paper, where it comes from); set onto the cases as Case.expected / Case.anchor.
    anchors: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    # The tensor arguments the docstring marks "with gradient" (their gradient is compared with
    # the reference's) and "detached" (no gradient may reach them), by parameter name: the
    # inputs a gradient case differentiates (see the module docstring; tests/test_gradients.py
    # keeps them in sync with the reference's docstring).
    with_gradient: tuple[str, ...] = ()
    detached: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        from autograder.cases.rules import RULES

        rules = RULES.get(self.name, {})
        unknown = sorted(set(self.anchors) - {c.id for c in self.cases})
        if unknown:
            raise ValueError(f"{self.name}: anchors for no case: {unknown}")
        if self.anchors:
            object.__setattr__(
                self,
                "cases",
                tuple(
                    replace(c, expected=self.anchors[c.id][0], anchor=self.anchors[c.id][1])
                    if c.id in self.anchors
                    else c
                    for c in self.cases
                ),
            )
        object.__setattr__(
            self,
            "cases",
            tuple(
                replace(
                    c,
                    rtol=self.rtol if c.rtol is None else c.rtol,
                    atol=self.atol if c.atol is None else c.atol,
                    rule=c.rule or ("" if c.kind == "value" else rules.get(c.id, "")),
                )
                for c in self.cases
            ),
        )
        ids = [c.id for c in self.cases]
        if len(ids) != len(set(ids)):
            raise ValueError(f"{self.name}: duplicate case ids")
        mids = [m.id for m in self.mistakes]
        if len(mids) != len(set(mids)):
            raise ValueError(f"{self.name}: duplicate mistake ids")
        self._check_split()
        if self.of_kind("gradient") and not self.with_gradient:
            raise ValueError(f"{self.name}: gradient cases need with_gradient= (argument names)")
        object.__setattr__(self, "mistakes", tuple(m.bound_to(self.name) for m in self.mistakes))

    def _check_split(self) -> None:
        s = self.split
        shares = [s.share(k) for k in KINDS]
        if any(x < 0 for x in shares) or sum(shares) != 100:
            raise ValueError(f"{self.name}: the split must be whole percents summing to 100")
        if s.invalid > MAX_INVALID_SHARE:
            raise ValueError(f"{self.name}: input checks weigh at most {MAX_INVALID_SHARE} %")
        if not s.is_default and not s.reason:
            raise ValueError(f"{self.name}: a split other than 70/15/15 needs a reason")
        for k in KINDS:
            n = sum(1 for c in self.cases if c.kind == k)
            if n and not s.share(k):
                raise ValueError(f"{self.name}: {n} {k} cases but no points for them")
            if not n and s.share(k):
                raise ValueError(
                    f"{self.name}: no {k} cases but {s.share(k)} % for them; "
                    "declare a split (with its reason) that gives them 0 %"
                )

    def of_kind(self, kind: str) -> list[int]:
        """Indices of the cases of one kind."""
        return [i for i, c in enumerate(self.cases) if c.kind == kind]


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
