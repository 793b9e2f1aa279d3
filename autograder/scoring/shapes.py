"""Error shapes: what the learner's wrong values have in common, when no known mistake explains them.

Pure functions over encoded outcomes (see codec). Given the failing value cases
of one function (inputs, expected outcome, the learner's outcome, tolerances),
:func:`find_shape` names one relation that holds on *every* failing case, with
the factor or offset it found, or returns None rather than guess:

    raised       the same exception on valid inputs
    wrong-type   e.g. None (a missing return) where a number was expected
    nan, inf     a non-finite value where a finite one was expected
    transposed   the expected array with its two axes swapped
    keepdim      the expected values with an extra (or a missing) axis of length 1
    wrong-axis   a reduction of an input over another axis than the expected one
    wrong-shape  any other shape, with the input dimensions its sizes match
    constant     the same number on every failing case, whatever the inputs
    sign         every value negated (the sign is flipped; where, the values cannot say)
    abs          every value the absolute value of the expected one (some expected negative)
    factor       every value times one constant: 2, ½, ln 2, ln 10 (log base 2 or 10),
                 a length or a batch size of the inputs (sum vs mean), the number of
                 valid entries of each row of a mask, or any other constant; or times a
                 ratio of small whole numbers that changes from value to value (a count)
    count        every value and its expected one shares of the same n entries (k / n), other
                 counts: which entries count
    offset       every value plus one constant, or plus a quantity of one input alone (its
                 sum, its mean, its entropy: a cross-entropy where a KL belongs)
    input-returned  every value one of the inputs itself, unchanged (a term left out there)
    reciprocal   every value inverted
    power        every value c · √expected or c · expected² (a square missing or too many)
    clamped      the expected values clamped at one constant (a clip the formula lacks)
    shifted      the expected values moved by one position along an axis
    permuted     the expected values in another order (reversed, or any order)

The diagnosis is in the second person and says what to change.

A relation read from the failing cases must hold on the passing ones too (``passing``, the
same function's checks that pass): a clamp at +1 is not what a function does when a passing
check returns -1 where -1 is expected below that bound. A relation a passing check
contradicts is not named (less, never untrue).

A generated case's inputs are hidden from the learner (they could be replayed on a
regrade with the same secret), and so is everything that depends on them or that the
learner chose: when any failing case is generated (``hidden``), :attr:`Shape.text`
names the relation and the rule only (no exception message, no size, shape, factor,
offset or returned number, no type name the learner's code defined) and
:attr:`Shape.detail` holds the full text, shown with ``--show-hidden`` only.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from autograder.cases.compare import cut, number_text

# inputs {"args", "kwargs"}, expected outcome, learner's outcome, rtol, atol
FailingCase = tuple[dict, dict, dict, float, float]

LN2, LN10 = math.log(2.0), math.log(10.0)
# A factor within 0.1 % of 1 is a near miss (float noise, a stabiliser), not a wrong constant:
# it would print as "1×" and contradict the failure beside it.
NEAR_ONE = 1e-3

CONSTANTS = (
    (2.0, "2", "a factor 2 is extra (or a ½ is missing)"),
    (0.5, "½", "a factor 2 is missing (or a ½ is extra)"),
    (1 / LN2, "1 / ln 2", "you used log base 2: use the natural log (math.log, np.log)"),
    (1 / LN10, "1 / ln 10", "you used log base 10: use the natural log (math.log, np.log)"),
    (LN2, "ln 2", "you converted natural logs to base 2 the wrong way round: use the natural log"),
    (
        LN10,
        "ln 10",
        "you converted natural logs to base 10 the wrong way round: use the natural log",
    ),
)


@dataclass(frozen=True)
class Shape:
    id: str
    text: str  # second person, says what to change; what a learner may read
    detail: str = ""  # the text with the hidden cases' specifics (for --show-hidden), if it differs
    # the relation the text states, on one check's finite values (expected, yours, rtol, atol):
    # a passing check where it does not hold contradicts the text (None: not checked)
    holds: Callable[..., bool] | None = field(default=None, compare=False, repr=False)


def find_shape(
    cases: Sequence[FailingCase],
    arg_names: Sequence[str] = (),
    hidden: Sequence[bool] = (),
    passing: Sequence[FailingCase] = (),
) -> Shape | None:
    """The one error shape that holds on every failing case, and that no passing case
    contradicts, or None.

    ``arg_names`` names the positional arguments in the text ("the mask" reads
    better than "argument 2"); missing names read "argument k". ``hidden[i]``: case i
    is generated (missing entries: fixed); then the text carries nothing of it.
    ``passing``: the checks of the same kinds that pass (their values are the expected
    ones); a relation between values is named only if it holds on them too.
    """
    if not cases:
        return None
    names = _Names(arg_names, [bool(h) for h in hidden] + [False] * (len(cases) - len(hidden)))
    names.passing = _passing_points(passing)
    names.passing_cases = list(passing)
    for check in (_raised, _wrong_type, _non_finite, _shape_mismatch, _same_shape):
        found = check(cases, names)
        if found is not None:
            return found if found.id else None  # an empty id: the check owns these cases, no shape
    return None


def _passing_points(passing: Sequence[FailingCase]) -> list:
    """The passing checks' finite values, as (expected, yours, rtol, atol); a check whose
    value is not numbers (an exception expected and raised) says nothing of a relation."""
    import numpy as np

    out = []
    for _, exp, got, rtol, atol in passing:
        if "value" not in exp or "value" not in got:
            continue
        e, g = _array(exp["value"]), _array(got["value"])
        if e is None or g is None or e.shape != g.shape:
            continue
        ok = np.isfinite(e) & np.isfinite(g)
        out.append((e, g, ok, rtol, atol))
    return out


def _contradicted(found: Shape, names: _Names) -> bool:
    """Does a passing check contradict the relation ``found`` states?"""
    if found.holds is None:
        return False
    with _quiet():
        for e, g, ok, rtol, atol in names.passing:
            if not ok.all():
                e, g = e[ok], g[ok]  # NaN or inf where expected tells nothing of a relation
            if e.size and not found.holds(e, g, rtol, atol):
                return True
    return False


def _quiet():
    import numpy as np

    return np.errstate(all="ignore")


# -- encoded values as arrays -----------------------------------------------------------------


def _array(j: Any):
    """A float numpy array for an encoded number / list / array / tensor (bools as 0/1), else None."""
    import numpy as np

    def scalar(v: Any) -> float | None:
        if isinstance(v, bool):
            return float(v)
        if isinstance(v, (int, float)):
            return float(v)
        if isinstance(v, dict) and set(v) == {"$float"}:
            return float(v["$float"])
        return None

    s = scalar(j)
    if s is not None:
        return np.array(s)
    if isinstance(j, dict) and ("$array" in j or "$tensor" in j):
        flat = [scalar(v) for v in j.get("$array", j.get("$tensor"))]
        if any(v is None for v in flat):
            return None
        return np.array(flat, dtype=float).reshape(j["shape"])
    if isinstance(j, list):
        parts = [_array(v) for v in j]
        if any(p is None for p in parts) or len({p.shape for p in parts}) > 1:
            return None
        return np.array(parts, dtype=float) if parts else np.zeros(0)
    return None


def _kind(j: Any) -> str:
    if j is None:
        return "None"
    if isinstance(j, bool):
        return "a bool"
    if isinstance(j, str):
        return "a str"
    if _array(j) is not None:
        return "a number" if _array(j).ndim == 0 else "an array of numbers"
    if isinstance(j, dict) and "$obj" in j:
        return f"a {j['$obj']}"
    if isinstance(j, dict) and "$dict" in j:
        return "a dict"
    if isinstance(j, list):
        return "a list"
    return "something else"


class _Names:
    """How the text names the arguments, and whether it may show the cases' specifics."""

    def __init__(self, names: Sequence[str], hidden: Sequence[bool] = ()):
        self.names = list(names)
        self.hidden = list(hidden)
        self.public = not any(self.hidden)  # every failing case is fixed: the notebook shows it
        self.passing: list = []  # the passing checks' values (find_shape's ``passing``)
        self.passing_cases: list = []  # the passing checks themselves, inputs included

    def arg(self, k: int) -> str:
        return f"`{self.names[k]}`" if k < len(self.names) else f"argument {k + 1}"

    def shape(self, id: str, full: str, safe: str, holds=None) -> Shape:
        """``full`` when every case is fixed; else ``safe`` (nothing of a generated case)
        with ``full`` kept as the detail for --show-hidden."""
        if self.public or safe == full:
            return Shape(id, full, holds=holds)
        return Shape(id, safe, full, holds=holds)


# Exception types whose name a learner's code cannot choose: Python's own, numpy's and
# torch's usual ones, and the grader's markers. Any other name (a class the learner's code
# defined, named at will) is not shown for a generated case: it could spell its inputs.
_KNOWN_EXCEPTIONS = frozenset(
    n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)
) | {"LinAlgError", "AxisError", "UnsupportedReturn", "Timeout", "Crash", "NotRun", "InvalidOutput"}


def exception_name(name: str, hidden: bool) -> str:
    """An exception type as feedback may name it: any name on a fixed case; on a generated
    case only a name the learner's code cannot choose."""
    if not hidden or name in _KNOWN_EXCEPTIONS:
        return name
    return "an exception of a type your code defined"


def _inputs(inp: dict) -> list:
    """The numeric positional arguments of a case as arrays (None where not numeric)."""
    return [_array(a) for a in inp.get("args", [])]


def _close(target, got, rtol: float, atol: float) -> bool:
    import numpy as np

    target, got = np.asarray(target, dtype=float), np.asarray(got, dtype=float)
    if target.shape != got.shape:
        return False
    with np.errstate(all="ignore"):
        return bool(np.all(np.abs(got - target) <= atol + rtol * np.abs(target)))


# -- the checks, in order ----------------------------------------------------------------------


def _raised(cases, names) -> Shape | None:
    raised = [c[2].get("raised") for c in cases]
    if not any(raised):
        return None
    if not all(raised) or len(set(raised)) > 1:
        return Shape("", "")  # some raised, some did not: no single shape
    rule = "valid inputs must give a value, so find the line that fails on them"

    def text(kind: str, msg: str) -> str:
        quoted = f' ("{cut(msg, 80)}")' if msg else ""
        return f"your function raised {kind} on valid inputs{quoted} on every failing check of the formula: {rule}"

    # The learner's message is shown from a fixed case only (its inputs are public).
    fixed = [c for c, h in zip(cases, names.hidden) if not h]
    shown = (fixed[0][2].get("message") or "").strip() if fixed else ""
    full = text(raised[0], (cases[0][2].get("message") or "").strip())
    return names.shape("raised", full, text(exception_name(raised[0], bool(not fixed)), shown))


def _wrong_type(cases, names) -> Shape | None:
    kinds = [(_kind(c[1].get("value")), _kind(c[2].get("value"))) for c in cases]
    numeric = [("number" in e and "number" in g) for e, g in kinds]
    if all(numeric):
        return None  # numbers both sides: the value checks below
    wrong = [e != g and not n for (e, g), n in zip(kinds, numeric)]
    if not all(wrong) or len({g for _, g in kinds}) > 1:
        return Shape("", "")  # right types but wrong values, or no single pattern
    e, g = kinds[0]
    if len({e for e, _ in kinds}) > 1:
        e = "a value"
    hint = " (did you forget `return`?)" if g == "None" else ""
    # an object's type name is the learner's choice: "an object" for a generated case
    g_safe = (
        "an object"
        if isinstance(cases[0][2].get("value"), dict) and "$obj" in cases[0][2]["value"]
        else g
    )
    return names.shape(
        "wrong-type",
        f"you returned {g} where {e} was expected{hint}",
        f"you returned {g_safe} where {e} was expected{hint}",
    )


def _pairs(cases):
    return [(_array(c[1]["value"]), _array(c[2]["value"])) for c in cases]


def _non_finite(cases, names) -> Shape | None:
    import numpy as np

    found = []
    for e, g in _pairs(cases):
        if e.shape != g.shape:
            found.append(set())
            continue
        bad = np.isfinite(e) & ~np.isfinite(g)
        found.append({"NaN" if math.isnan(x) else "inf" for x in g[bad]})
    if not any(found):
        return None
    if not all(found):
        return Shape("", "")
    every = set.union(*found)
    if every == {"NaN"}:
        return Shape(
            "nan",
            "you returned NaN where a finite number was expected: a 0/0, 0 · log 0 or inf − inf "
            "happens in your code; find that term and handle it as the formula says",
        )
    if every == {"inf"}:
        return Shape(
            "inf",
            "you returned ±inf where a finite number was expected: a division by zero or a log of 0 "
            "happens in your code; find that term and handle it as the formula says",
        )
    return Shape(
        "nan-or-inf",
        "you returned NaN or inf where a finite number was expected: find the term that divides "
        "by zero or takes a log of 0 and handle it as the formula says",
    )


def _shape_mismatch(cases, names) -> Shape | None:

    pairs = _pairs(cases)
    differ = [e.shape != g.shape for e, g in pairs]
    if not any(differ):
        return None
    if not all(differ):
        return Shape("", "")
    e0, g0 = pairs[0]
    # the shapes are sizes of the inputs (and the learner's choice): named for fixed cases only
    shapes = f"{_fmt(g0.shape)} instead of {_fmt(e0.shape)}"
    if all(
        e.ndim == 2 and g.shape == e.shape[::-1] and _close(e.T, g, c[3], c[4])
        for (e, g), c in zip(pairs, cases)
    ):
        rule = "swap the two axes of what you return"
        return names.shape(
            "transposed",
            f"your result is the transpose of the expected one ({shapes}): {rule}",
            f"your result is the transpose of the expected one: {rule}",
        )
    if all(
        e.size == g.size and _close(e.reshape(-1), g.reshape(-1), c[3], c[4])
        for (e, g), c in zip(pairs, cases)
    ):
        rule = "reduce without keeping the axis (keepdim=False) or reshape what you return"
        return names.shape(
            "keepdim",
            f"your values are right but shaped {shapes}: {rule}",
            f"your values are right but shaped differently (an extra or a missing axis of "
            f"length 1): {rule}",
        )
    axis = _reduced_axes(cases, pairs)
    if axis is not None:
        k, want, have, op = axis
        said = (
            f"you took the {op} of {names.arg(k)} over axis {have}; the formula reduces over "
            f"axis {want}"
        )
        return names.shape("wrong-axis", f"{said} (your result has shape {shapes})", said)
    rule = ": check which axis you reduce over and what you return"
    return names.shape(
        "wrong-shape",
        f"your result has shape {_fmt(g0.shape)} where {_fmt(e0.shape)} was expected"
        + _dims_hint(cases, pairs, names)
        + rule,
        "your result's shape is not the expected one" + rule,
    )


def _reduced_axes(cases, pairs):
    """(arg, expected axis, learner's axis, op) when both results are reductions of one input."""
    import numpy as np

    found = None
    for k, x in enumerate(_inputs(cases[0][0])):
        if x is None or x.ndim < 2:
            continue
        for op, fn in (("sum", np.sum), ("mean", np.mean)):
            for want in range(x.ndim):
                for have in range(x.ndim):
                    if want == have:
                        continue
                    ok = True
                    for (e, g), c in zip(pairs, cases):
                        xs = _inputs(c[0])
                        xk = xs[k] if k < len(xs) else None
                        if xk is None or xk.ndim != x.ndim:
                            ok = False
                            break
                        if not (
                            _close(fn(xk, axis=want), e, c[3], c[4])
                            and _close(fn(xk, axis=have), g, c[3], c[4])
                        ):
                            ok = False
                            break
                    if ok:
                        found = found or (k, want, have, op)
    return found


def _dims_hint(cases, pairs, names) -> str:
    """Which input axes the sizes name, e.g. " (5 is the length of axis 0 of `h_a`; …)"."""
    e0, g0 = pairs[0]
    sizes = []
    for n in list(dict.fromkeys([*e0.shape, *g0.shape])):
        where = [
            (k, d)
            for k, x in enumerate(_inputs(cases[0][0]))
            if x is not None
            for d, m in enumerate(x.shape)
            if m == n
        ]
        if len(where) == 1 and n > 1:
            k, d = where[0]
            sizes.append(f"{n} is the length of axis {d} of {names.arg(k)}")
    return f" ({'; '.join(sizes)})" if sizes else ""


def _same_shape(cases, names) -> Shape | None:
    import numpy as np

    pairs = [(e, g, c[3], c[4]) for (e, g), c in zip(_pairs(cases), cases)]
    # positions where both are the same non-finite value, or expected is non-finite, tell nothing
    points = []
    for e, g, rtol, atol in pairs:
        ok = np.isfinite(e) & np.isfinite(g)
        points.append((e[ok], g[ok], rtol, atol))
    if not all(len(e) for e, *_ in points):
        return None
    informative = np.concatenate([e[np.abs(e) > max(atol, 1e-300)] for e, _, _, atol in points])
    distinct = len(np.unique(np.round(informative, 12)))
    for check in (
        _constant,
        _sign,
        _abs,
        _factor,
        _offset,
        _input_returned,
        _functional_offset,
        _reciprocal,
        _clamped,
        _power,
    ):
        found = check(cases, pairs, points, distinct, names)
        if found is not None and not _contradicted(found, names):
            return found
    for check in (_transposed_square, _shifted, _permuted):
        found = check(pairs)
        if found is not None and not _contradicted(found, names):
            return found
    return None


def _constant(cases, pairs, points, distinct, names) -> Shape | None:
    """The same number everywhere, whatever the inputs (also what a factor 0 would be)."""
    import numpy as np

    values = np.concatenate([g for _, g, _, _ in points])
    # "whatever the inputs" needs two failing checks at least: one check's value may be a
    # coincidence of its inputs (self-pairs dropped on an orthogonal example give 0)
    if len(cases) < 2 or distinct < 2 or not np.all(values == values[0]):
        return None
    v0 = values[0]
    # "does not depend on them" is untrue when a passing check returned another number: then
    # the line keeps to the failing checks, what is true of them
    varies = any(bool(np.any(g[ok] != v0)) for _, g, ok, _, _ in names.passing)
    rule = (
        "on every failing check of the formula, whatever the inputs: your result does not depend on them; "
        "check what you compute and what you return"
        if not varies
        else "on every failing check of the formula, whatever their inputs (the checks that "
        "pass get other values): check what your code computes and returns on the failing ones"
    )
    return names.shape(
        "constant",
        f"you returned {number_text(v0)} {rule}",
        f"you returned the same number {rule}",
    )


def _sign(cases, pairs, points, distinct, names) -> Shape | None:
    if distinct < 2 or not all(_close(-e, g, r, a) for e, g, r, a in points):
        return None
    return Shape(
        "sign",
        # a sign lost anywhere gives this, not only a difference taken the other way round
        # (a negated result, a minus too many, a negated factor): say what is seen, then where
        # to look, never one of them as the cause
        "every value is the negative of the expected one (−1× it): a sign is flipped "
        "somewhere; look for a minus sign too many or too few, a difference taken the other "
        "way round (b − a for a − b) or two arguments swapped",
        holds=lambda e, g, r, a: _close(-e, g, r, a),
    )


def _abs(cases, pairs, points, distinct, names) -> Shape | None:
    """Every value the absolute value of the expected one, and some expected ones negative."""
    import numpy as np

    if distinct < 2 or not any((e < -a).any() for e, _, _, a in points):
        return None
    if not all(_close(np.abs(e), g, r, a) for e, g, r, a in points):
        return None
    return Shape(
        "abs",
        "every value is the absolute value of the expected one (the negative ones lost their "
        "sign): you took abs() of something the formula keeps signed",
        holds=lambda e, g, r, a: _close(np.abs(e), g, r, a),
    )


def _factor_of(e, g, rtol, atol) -> float | None:
    import numpy as np

    if not len(e):
        return None
    i = int(np.argmax(np.abs(e)))
    if abs(e[i]) <= atol or e[i] == 0:
        return None
    c = g[i] / e[i]
    return float(c) if _close(c * e, g, rtol, atol) else None


def _factor(cases, pairs, points, distinct, names) -> Shape | None:

    factors = [_factor_of(e, g, r, a) for e, g, r, a in points]
    if any(c is None for c in factors):
        return (
            _per_row_factor(cases, pairs, names)
            or _share_count(cases, points, names)
            or _count_ratio(points, names)
        )
    c0 = factors[0]
    constant = all(abs(c - c0) <= 1e-6 * abs(c0) for c in factors)
    if constant and abs(c0 - 1) < NEAR_ONE:
        return None  # a near miss, not a factor: never "every value is 1× the expected one"
    if not constant:
        return (
            _named_length(cases, factors, names)
            or _per_row_factor(cases, pairs, names)
            or _share_count(cases, points, names)
            or _count_ratio(points, names)
        )
    for value, label, advice in CONSTANTS:
        if abs(c0 - value) <= 1e-6 * value:
            shown = label if label == f"{value:g}" else f"{label} ({value:.6g})"
            return Shape(
                "factor",
                f"every value is {shown}× the expected one: {advice}",
                holds=lambda e, g, r, a: _close(c0 * e, g, r, a),
            )
    named = _named_length(cases, factors, names)
    if named is not None:
        return named
    if distinct < 2 or abs(c0 - 1) < 1e-9:
        return None  # one number cannot tell a factor from anything else
    rule = (
        "a constant factor is wrong; look for a coefficient, a normalisation or a scale that "
        "you added or left out"
    )
    # the learner's value over the expected one: a number of their choosing, fixed cases only
    return names.shape(
        "factor",
        f"every value is {c0:.6g}× the expected one: {rule}",
        f"every value is the expected one times the same constant: {rule}",
        holds=lambda e, g, r, a: _close(c0 * e, g, r, a),
    )


def _lengths(inp: dict, names) -> dict[str, float]:
    """Named lengths of one case's inputs: every axis of every numeric argument, and its size."""
    out: dict[str, float] = {}
    for k, x in enumerate(_inputs(inp)):
        if x is None or x.ndim == 0:
            continue
        if x.ndim == 1:
            out[f"the length of {names.arg(k)}"] = float(x.shape[0])
            continue
        for d, n in enumerate(x.shape):
            out[f"the length of axis {d} of {names.arg(k)}"] = float(n)
        out[f"the number of entries of {names.arg(k)}"] = float(x.size)
    return out


# the scales by a size n of the inputs a factor shape names, in the order they are tried (the
# lengths themselves first): (power of n, what the values are, what to change, whether n must
# take two values over the failing checks: a √n of one size is any other constant)
_SQRT_RULE = "a scale by the square root of a size that the formula does not have"
_LENGTH_SCALES = (
    (
        (
            1.0,
            "every value is n× the expected one",
            "you summed where the formula averages; divide by n",
            False,
        ),
        (
            -1.0,
            "every value is the expected one divided by n",
            "you averaged where the formula sums; drop the division by n",
            False,
        ),
    ),
    (
        (
            0.5,
            "every value is √n× the expected one",
            _SQRT_RULE,
            True,
        ),
        (-0.5, "every value is the expected one divided by √n", _SQRT_RULE, True),
    ),
)


def _named_length(cases, factors, names) -> Shape | None:
    """Every value the expected one times n, 1/n, √n or 1/√n, n a named length of the inputs
    (the sizes themselves are named for fixed cases only); the whole powers of every length
    are tried before the square roots (1/√d as in scaled dot-product attention, a √n from a
    standard error)."""
    per_case = [_lengths(c[0], names) for c in cases]
    if not per_case:
        return None
    for scales in _LENGTH_SCALES:
        for name in per_case[0]:
            values = [p.get(name) for p in per_case]
            if any(v is None or v < 2 for v in values):
                continue
            for power, head, rule, varies in scales:
                if varies and len(set(values)) < 2:
                    continue
                if all(abs(c - v**power) <= 1e-6 * v**power for c, v in zip(factors, values)):
                    return names.shape(
                        "factor",
                        f"{head}, with n = {name} ({_join(values)}): {rule}",
                        f"{head}, with n = {name}: {rule}",
                    )
    return None


def _per_row_factor(cases, pairs, names) -> Shape | None:
    """Each value off by the number of valid entries of its row of a 0/1 input (a mask)."""
    import numpy as np

    for k, x in enumerate(_inputs(cases[0][0])):
        if x is None or x.ndim < 1 or not np.isin(x, (0.0, 1.0)).all():
            continue
        for inverse in (False, True):
            ok = True
            for (e, g, rtol, atol), c in zip(pairs, cases):
                xs = _inputs(c[0])
                xk = xs[k] if k < len(xs) else None
                if xk is None or xk.shape[:-1] != e.shape:
                    ok = False
                    break
                counts = xk.sum(axis=-1)
                if (counts < 1).any():
                    ok = False
                    break
                target = e / counts if inverse else e * counts
                if not _close(target, g, rtol, atol) or _close(e, g, rtol, atol):
                    ok = False
                    break
            if ok and _per_row_contradicted(k, inverse, names):
                ok = False  # a passing check where the count is not 1 keeps its mean
            if ok:
                who = f"the number of 1s in that row of {names.arg(k)}"
                if inverse:
                    return Shape(
                        "factor",
                        f"every value is the expected one divided by {who}: you averaged over "
                        "the valid entries where the formula sums them",
                    )
                return Shape(
                    "factor",
                    f"every value is the expected one times {who}: you summed over the valid "
                    "entries where the formula averages them; divide by their number",
                )
    return None


def _per_row_contradicted(k: int, inverse: bool, names) -> bool:
    """Does a passing check contradict "each value times (or over) its row's count of input
    ``k``": a check whose value your code got right where that factor would have moved it (a
    row of 2 or more valid entries and a value not 0)? Then the factor on the failing checks
    is an accident of their inputs (one nonzero entry a row), not a sum for a mean."""
    import numpy as np

    for inp, exp, _got, rtol, atol in getattr(names, "passing_cases", ()):
        xs = _inputs(inp)
        e = _array(exp.get("value")) if isinstance(exp, dict) else None
        xk = xs[k] if k < len(xs) else None
        if e is None or xk is None or xk.shape[:-1] != e.shape:
            continue
        if not np.isin(xk, (0.0, 1.0)).all():
            continue
        counts = xk.sum(axis=-1)
        with _quiet():
            moved = e / counts if inverse else e * counts
        if not _close(moved, e, rtol, atol):
            return True
    return False


# A count ratio: on each check, every value the expected one times n / m, one ratio of whole
# numbers per check that changes from check to check (a sum over the wrong set, a mean with the
# wrong count). There are about 5,000 ratios with m at most 64 between 0 and 4; the value of a
# wrong formula on random inputs lands within 2e-6 (float32 arithmetic stays inside it) of one
# by chance about once in 25 checks, so a ratio on two or more generated checks is evidence of a
# count. Hand-written inputs (0.5, 0.3) give such ratios by themselves: no evidence.
COUNT_DENOMINATOR = 64
COUNT_NUMERATOR = 256
COUNT_RTOL = 2e-6


def _share_count(cases, points, names) -> Shape | None:
    """Every failing value and its expected one are shares of the same n entries (whole counts
    k / n in [0, 1], n one length of the inputs on every check): the division is right and the
    count is not. Said instead of :func:`_count_ratio`, whose "what you divide by" would be
    untrue there (any two shares of n are a ratio of whole numbers apart)."""
    import numpy as np

    per_case = [_lengths(c[0], names) for c in cases]
    if not per_case:
        return None

    def counts(x, n: float) -> bool:
        x = np.ravel(np.asarray(x, dtype=float))
        k = x * n
        return bool(
            np.all(np.isfinite(x))
            and np.all((x >= 0) & (x <= 1))
            and np.all(np.abs(k - np.round(k)) <= 1e-6 * max(1.0, n))
        )

    for name in per_case[0]:
        ns = [p.get(name) for p in per_case]
        if any(n is None or n < 2 for n in ns):
            continue
        if all(counts(e, n) and counts(g, n) for (e, g, _, _), n in zip(points, ns)):
            return Shape(
                "count",
                f"your values and the expected ones are both shares of the same n entries (a "
                f"whole count divided by n = {name}), other counts: look at the test that "
                "decides which entries count",
            )
    return None


def _count_ratio(points, names) -> Shape | None:
    """Each failing check off by its own ratio of small whole numbers, the same for all its
    differing values, not the same on every check (a constant factor is :func:`_factor`'s),
    two or more of them generated."""
    from fractions import Fraction

    import numpy as np

    ratios, generated = set(), 0
    for k, (e, g, rtol, atol) in enumerate(points):
        mine = set()
        for x, y in zip(np.ravel(e), np.ravel(g)):
            if abs(y - x) <= atol + rtol * abs(x):
                if abs(x) > atol:
                    # a right value that is not 0 is the expected one times 1: a count wrong
                    # on the whole check moves it too (a value right beside wrong ones is a
                    # rule about entries, not a count)
                    mine.add(Fraction(1))
                continue
            if abs(x) <= atol:
                return None  # wrong where the expected value is 0: no ratio says it
            c = y / x
            f = Fraction(c).limit_denominator(COUNT_DENOMINATOR)
            if f <= 0 or f.numerator > COUNT_NUMERATOR or abs(f - c) > COUNT_RTOL * abs(c):
                return None
            mine.add(f)
        if len(mine) > 1:
            return None  # two ratios within one check: not one count per check
        ratios |= mine
        generated += bool(mine) and k < len(names.hidden) and names.hidden[k]
    if len(ratios) < 2 or generated < 2:
        return None
    return Shape(
        "factor",
        "on each failing check every value is the expected one times a ratio of whole numbers "
        "(n / m), a different one from check to check: a sum or a mean taken over the wrong "
        "count; check what you sum over and what you divide by",
    )


def _offset(cases, pairs, points, distinct, names) -> Shape | None:
    import numpy as np

    if distinct < 2:
        return None
    diffs = [g - e for e, g, _, _ in points]
    d0 = float(diffs[0][0])
    if not all(_close(np.full_like(e, d0) + e, g, r, a) for e, g, r, a in points):
        return None
    # the learner's value minus the expected one: named for fixed cases only
    return names.shape(
        "offset",
        f"every value is {d0:+.6g} off the expected one: a constant term is missing or extra "
        f"(add {-d0:+.6g} where it belongs, or find the term you added)",
        "every value is the same constant off the expected one: a constant term is missing "
        "or extra (find the term you added or left out)",
        holds=lambda e, g, r, a: _close(e + d0, g, r, a),
    )


def _input_returned(cases, pairs, points, distinct, names) -> Shape | None:
    """On every failing check (two or more) the value is one of the inputs itself, unchanged
    (same shape, same numbers), where the formula changes it: a term or a factor left out on
    those checks."""
    import numpy as np

    if len(cases) < 2:
        return None
    per_case = [_inputs(c[0]) for c in cases]
    raw = [c[0].get("args", []) for c in cases]
    n_args = min(len(a) for a in per_case)
    for k in range(n_args):
        ok = True
        seen: set = set()
        for args, r_args, (_e, g, r, a) in zip(per_case, raw, pairs):
            x, rx = args[k], r_args[k]
            if isinstance(rx, bool) or (isinstance(rx, dict) and rx.get("dtype") == "bool"):
                ok = False  # a flag or a mask that reads as 0 or 1 is no value returned
                break
            if x is None or np.shape(x) != np.shape(g) or not _close(x, g, r, a):
                ok = False
                break
            seen |= {round(float(v), 12) for v in np.ravel(x)}
        if ok and len(seen) >= 2:  # one number returned everywhere is _constant's, not this
            return Shape(
                "input-returned",
                f"on every failing check your value is {names.arg(k)} itself, unchanged, where "
                "the formula changes it: a term or a factor your code leaves out on those checks",
            )
    return None


OFFSET_COEFFICIENTS = (1.0, -1.0, 0.5, -0.5, 2.0, -2.0)


def _functionals(x) -> dict[str, float]:
    """Named quantities of one 1-D input alone: its sum, its mean and, for a probability
    vector (entries ≥ 0 summing to 1), its entropy."""
    import numpy as np

    out = {"the sum of": float(x.sum()), "the mean of": float(x.mean())}
    if np.all(x >= 0) and abs(float(x.sum()) - 1.0) <= 1e-6:
        nz = x[x > 0]
        out["the entropy −Σ x log x of"] = float(-(nz * np.log(nz)).sum())
    return out


def _functional_offset(cases, pairs, points, distinct, names) -> Shape | None:
    """Every value the expected one plus c · F(x), F one named quantity of one 1-D input x
    alone (its sum, its mean, its entropy), c one of a few simple constants, F taking at
    least two different values over the failing checks (one value is a constant offset,
    :func:`_offset`'s); a passing check where c · F(x) is not 0 contradicts it."""
    import numpy as np

    per_case = [_inputs(c[0]) for c in cases]
    n_args = min(len(a) for a in per_case) if per_case else 0
    for k in range(n_args):
        xs = [a[k] for a in per_case]
        if any(x is None or x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)) for x in xs):
            continue
        fs = [_functionals(x) for x in xs]
        for fname in fs[0]:
            if any(fname not in f for f in fs):
                continue
            vals = [f[fname] for f in fs]
            if len({round(v, 9) for v in vals}) < 2:
                continue
            for c in OFFSET_COEFFICIENTS:
                if not all(_close(e + c * v, g, r, a) for (e, g, r, a), v in zip(points, vals)):
                    continue
                if _offset_contradicted(names, k, fname, c):
                    continue
                word = "plus" if c > 0 else "minus"
                times = "" if abs(c) == 1 else f"{abs(c):g} × "
                text = (
                    f"every value is the expected one {word} {times}{fname} {names.arg(k)}: a "
                    f"term in {names.arg(k)} alone that the formula does not have, or one it "
                    "has and your code leaves out"
                )
                if fname.startswith("the entropy") and abs(c) == 1:
                    kind = "cross-entropy" if c > 0 else "KL"
                    other = "KL" if c > 0 else "cross-entropy"
                    text += (
                        f" (a {kind} where the formula takes a {other}: the cross-entropy "
                        f"−Σ p log q is the KL Σ p log(p / q) plus the entropy of p)"
                    )
                return Shape("offset", text)
    return None


def _offset_contradicted(names, k: int, fname: str, c: float) -> bool:
    """Does a passing check hold an input k whose c · F is not 0 (its value right, not moved)?"""
    import numpy as np

    for inp, exp, _got, rtol, atol in getattr(names, "passing_cases", ()):
        xs = _inputs(inp)
        if k >= len(xs) or xs[k] is None or xs[k].ndim != 1 or xs[k].size == 0:
            continue
        if not np.all(np.isfinite(xs[k])) or "value" not in exp:
            continue
        f = _functionals(xs[k]).get(fname)
        e = _array(exp["value"])
        if f is None or e is None or not np.all(np.isfinite(e)):
            continue
        if not _close(e + c * f, e, rtol, atol):
            return True
    return False


def _reciprocal(cases, pairs, points, distinct, names) -> Shape | None:
    import numpy as np

    if distinct < 2:
        return None
    for e, g, r, a in points:
        if (np.abs(e) <= a).any():
            return None
        with np.errstate(all="ignore"):
            if not _close(1 / e, g, r, a):
                return None
    return Shape(
        "reciprocal",
        "every value is 1 / the expected one: you inverted a ratio (b / a for a / b, or a − b "
        "inside an exp or log with the wrong sign)",
        holds=lambda e, g, r, a: _close(1 / e, g, r, a),
    )


POWERS = (
    (
        0.5,
        "every value is one constant times the square root of the expected one (c · √expected): "
        "the formula squares something your code does not (or your code takes a square root "
        "the formula does not)",
    ),
    (
        2.0,
        "every value is one constant times the square of the expected one (c · expected²): your "
        "code squares something the formula does not (or misses a square root the formula takes)",
    ),
)


def _power(cases, pairs, points, distinct, names) -> Shape | None:
    """Every value c · |e|^p with the expected value's sign, p = ½ or 2, one constant c: a square
    missing or too many. Needs three distinct sizes among the expected values (two points fit
    any power)."""
    import numpy as np

    sizes = np.concatenate([np.abs(e) for e, _, _, a in points])
    if len(np.unique(np.round(sizes[sizes > 1e-12], 9))) < 3:
        return None
    for p, text in POWERS:
        c = None
        ok = True
        for e, g, r, a in points:
            nz = np.abs(e) > a
            if np.any(np.sign(g[nz]) != np.sign(e[nz])):
                ok = False
                break
            if not nz.any():
                continue
            if c is None:
                k = int(np.argmax(np.abs(e)))
                c = float(g[k] / (np.sign(e[k]) * np.abs(e[k]) ** p))
                if not math.isfinite(c) or c == 0:
                    ok = False
                    break
            if not _close(c * np.sign(e) * np.abs(e) ** p, g, r, a):
                ok = False
                break
        if ok and c is not None:
            c0 = c
            return Shape(
                "power",
                text,
                holds=lambda e, g, r, a, c0=c0, p=p: _close(
                    c0 * np.sign(e) * np.abs(e) ** p, g, r, a
                ),
            )
    return None


def _clamped(cases, pairs, points, distinct, names) -> Shape | None:
    """Every value that differs is one constant c, and the expected ones there lie beyond c
    on one side while every value that agrees lies on the other: the expected values clamped
    at c (a clip the formula does not have, or at another bound)."""
    import numpy as np

    beyond, within, bound = [], [], None
    for e, g, rtol, atol in points:
        d = ~(np.abs(g - e) <= atol + rtol * np.abs(e))
        if not d.any():
            continue
        vals = g[d]
        c = float(vals[0]) if bound is None else bound
        if not np.all(np.abs(vals - c) <= atol + rtol * abs(c)):
            return None
        bound = c
        beyond.append(e[d])
        within.append(e[~d])
    if bound is None or sum(len(b) for b in beyond) < 2:
        return None
    over, under = np.concatenate(beyond), np.concatenate(within)
    if np.all(over > bound) and np.all(under <= bound):
        side = "above"
    elif np.all(over < bound) and np.all(under >= bound):
        side = "below"
    else:
        return None
    rule = "you clip where the formula does not, or at another bound"
    clip = np.minimum if side == "above" else np.maximum
    return names.shape(
        "clamped",
        f"your values are the expected ones clamped at {number_text(bound)}: every expected "
        f"value {side} it is {number_text(bound)} in yours, the others are right; {rule}",
        f"your values are the expected ones clamped at one constant: every expected value "
        f"{side} it is that constant in yours, the others are right; {rule}",
        # a passing check's expected value beyond the bound, right in yours, is no clamp
        holds=lambda e, g, r, a: _close(clip(e, bound), g, r, a),
    )


def _transposed_square(pairs) -> Shape | None:
    if not all(e.ndim == 2 and e.shape[0] == e.shape[1] > 1 for e, *_ in pairs):
        return None
    if all(_close(e.T, g, r, a) for e, g, r, a in pairs):
        return Shape(
            "transposed",
            "your result is the transpose of the expected one: swap the two axes of what you return",
            holds=lambda e, g, r, a: e.ndim != 2 or _close(e.T, g, r, a),
        )
    return None


def _shifted(pairs) -> Shape | None:
    import numpy as np

    ndim = pairs[0][0].ndim
    if ndim == 0 or any(e.ndim != ndim for e, *_ in pairs):
        return None
    for axis in range(ndim):
        for step, where in ((1, "later"), (-1, "earlier")):
            ok = True
            for e, g, r, a in pairs:
                n = e.shape[axis]
                if n < 3:
                    ok = False
                    break
                src = np.take(e, range(1, n) if step == 1 else range(0, n - 1), axis=axis)
                dst = np.take(g, range(0, n - 1) if step == 1 else range(1, n), axis=axis)
                if _close(src, np.take(e, range(0, n - 1), axis=axis), r, a) or not _close(
                    src, dst, r, a
                ):
                    ok = False
                    break
            if ok:
                return Shape(
                    "shifted",
                    f"your values are the expected ones shifted by one position along axis {axis} "
                    f"(each one is the expected value one position {where}): an index is off by "
                    "one (x[i + 1] for x[i], or a slice that starts one place too far)",
                )
    return None


def _permuted(pairs) -> Shape | None:
    import numpy as np

    for e, g, r, a in pairs:
        # two different values swapped is an order too (a pair returned the wrong way round);
        # otherwise three distinct values at least, or any order would fit rounding noise
        pair = e.size == 2 and not _close(e.reshape(-1)[:1], e.reshape(-1)[1:], r, a)
        if (len(np.unique(e)) < 3 and not pair) or not _close(
            np.sort(e, axis=None), np.sort(g, axis=None), r, a
        ):
            return None
    if all(e.ndim >= 1 and _close(np.flip(e, axis=-1), g, r, a) for e, g, r, a in pairs):
        return Shape(
            "permuted",
            "your values are the expected ones in reverse order along the last axis: "
            "keep the positions in the order of the inputs",
        )
    return Shape(
        "permuted",
        "your values are the expected ones in another order: check how you index, sort or "
        "pair up the entries",
    )


def _fmt(shape: tuple) -> str:
    return "a scalar" if shape == () else str(tuple(int(n) for n in shape))


def _join(values: list[float]) -> str:
    shown = list(dict.fromkeys(number_text(v) for v in values))
    return ", ".join(shown[:4]) + (", …" if len(shown) > 4 else "") + " here"


# -- where the values differ ------------------------------------------------------------------
# When no relation holds on every value, the entries that differ may still follow a rule of the
# inputs, entry by entry: exactly where an input of the output's shape is negative, zero or
# positive (or True or False), and right everywhere else. Two such rules may be joined with
# "and"; the tightest that holds is named. A rule wider than the entries that differ is not:
# it would point at entries that are right (a threshold's selection inside "> 0").

_PREDICATES = (
    ("< 0", lambda x: x < 0),
    ("≤ 0", lambda x: x <= 0),
    ("= 0", lambda x: x == 0),
    ("≥ 0", lambda x: x >= 0),
    ("> 0", lambda x: x > 0),
    ("≠ 0", lambda x: x != 0),
)
_BOOL_PREDICATES = (("is True", lambda x: x != 0), ("is False", lambda x: x == 0))


def where_differs(
    cases: Sequence[FailingCase],
    arg_names: Sequence[str] = (),
    passing: Sequence[FailingCase] = (),
) -> Shape | None:
    """Entry by entry: do the learner's values differ from the expected ones exactly where one
    input of the output's shape (or two, joined) meets a sign rule? Needs two or more differing
    entries and two or more entries where the rule does not hold. ``passing``: the checks
    that pass, whose entries are all right: a rule that holds on one of their entries is
    wider than what differs (right everywhere else would be untrue)."""
    import numpy as np

    names = _Names(arg_names)
    differ, inputs = [], []
    for inp, exp, got, rtol, atol in cases:
        if "value" not in exp or "value" not in got:
            return None
        e, g = _array(exp["value"]), _array(got["value"])
        if e is None or g is None or e.shape != g.shape or e.ndim == 0:
            return None
        with np.errstate(all="ignore"):
            differ.append(~(np.abs(g - e) <= atol + rtol * np.abs(e)))
        inputs.append(_inputs(inp))
    if sum(int(d.sum()) for d in differ) < 2:
        return None
    failing = len(differ)
    for inp, exp, got, _, _ in passing:
        e = _array(exp["value"]) if "value" in exp and "value" in got else None
        if e is None or e.ndim == 0:
            continue  # no entries a rule of the inputs could name
        differ.append(np.zeros(e.shape, dtype=bool))
        inputs.append(_inputs(inp))
    rules = []  # (words, the entries where it holds, per case)
    for k in range(min(len(x) for x in inputs)):
        xs = [x[k] for x in inputs]
        if any(x is None or x.shape != d.shape for x, d in zip(xs, differ)):
            continue
        kinds = _BOOL_PREDICATES if _is_bool(cases, k) else _PREDICATES
        for words, rule in kinds:
            rules.append((f"{names.arg(k)} {words}", [rule(x) for x in xs]))
    best = None
    candidates = list(rules) + [
        (f"{w1} and {w2}", [a & b for a, b in zip(m1, m2)])
        for i, (w1, m1) in enumerate(rules)
        for w2, m2 in rules[i + 1 :]
        if w1.split(" ")[0] != w2.split(" ")[0]
    ]
    for words, masks in candidates:
        outside = sum(int((~m).sum()) for m in masks)
        if outside < 2 or any((d != m).any() for d, m in zip(differ, masks)):
            continue  # the rule must hold exactly: a wider one would name more than differs
        size = sum(int(m.sum()) for m in masks)
        if best is None or size < best[0]:
            best = (size, words)
    if best is None:
        return _same_positions(differ[:failing])
    return Shape(
        "which-entries",
        f"your values differ from the expected ones exactly where {best[1]}, and are right "
        "everywhere else: look at what your code does with those entries",
    )


def _same_positions(differ) -> Shape | None:
    """A small result (a tuple of a few numbers) that differs at the same positions on every
    failing check, two or more checks, and is right at the others."""
    import numpy as np

    first = differ[0]
    if len(differ) < 2 or first.size > 8 or first.all():
        return None
    if any(d.shape != first.shape or (d != first).any() for d in differ):
        return None
    where = [int(i) for i in np.flatnonzero(first)]
    said = ", ".join(str(i) for i in where)
    return Shape(
        "which-entries",
        f"your result differs from the expected one at the same position{'s' if len(where) > 1 else ''} "
        f"on every failing check (index {said}), and is right at the others: "
        "look at how you compute that part of it",
    )


def _is_bool(cases, k: int) -> bool:
    """Is argument ``k`` a bool array (a mask) on every case, as encoded?"""
    for inp, *_ in cases:
        args = inp.get("args") or []
        a = args[k] if k < len(args) else None
        if not (isinstance(a, dict) and a.get("dtype") == "bool"):
            return False
    return True
