"""Independent anchors for the reference solutions, and the numbers shown to learners.

Expected values come from running the reference solution, so a wrong reference would
grade itself full marks. An *anchor* is a fixed case's ``expected=`` value, computed by
hand or taken from the paper (``Case.anchor`` says where from), never by calling the
reference: :func:`anchor_problems` lists every anchor the reference does not reproduce
within the function's stated tolerance.

A case's ``note`` and a mistake's ``diagnosis`` are shown to learners, and some quote
numbers ("exact forward KL 0.368064"). :func:`number_problems` lists every number with
two or more decimals in them that the code does not produce (to the decimals shown, within
the function's stated tolerance, in magnitude) on the function's fixed
cases: for a note, the case's inputs or the reference's output on it; for a diagnosis,
any fixed case's inputs, the reference's or that mistake's outputs; for both, what the
assignment's other functions return on their fixed cases (a note may compare with them).

``tests/test_anchors.py`` runs both on every function, and plants a wrong reference and
a wrong note number to show that they are caught.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from autograder.cases.codec import encode, outcome_of
from autograder.cases.compare import close, render_outcome
from autograder.cases.spec import Case, FunctionSpec

MIN_ANCHORS = 2  # per graded function

# A number as written in a note: optional sign (also the typographic minus), digits, a point
# and at least two decimals, not part of an identifier, a longer number or an exponent.
_NUMBER = re.compile(r"(?<![\w.])([-−+]?)(\d+)\.(\d{2,})(?![\d.eE])")


def shown_numbers(text: str) -> list[tuple[str, float, int]]:
    """(as written, value, decimals) of each number with two or more decimals in ``text``."""
    out = []
    for m in _NUMBER.finditer(text):
        sign = "-" if m.group(1) in ("-", "−") else ""
        value = float(f"{sign}{m.group(2)}.{m.group(3)}")
        out.append((m.group(0), value, len(m.group(3))))
    return out


def numbers_in(j: Any) -> Iterator[float]:
    """Every number in an encoded value (arrays, tensors, lists, objects' fields, dicts)."""
    if isinstance(j, bool) or j is None or isinstance(j, str):
        return
    if isinstance(j, (int, float)):
        yield float(j)
    elif isinstance(j, list):
        for v in j:
            yield from numbers_in(v)
    elif isinstance(j, dict):
        if "$float" in j:
            yield float(j["$float"])
        elif "$array" in j or "$tensor" in j:
            yield from numbers_in(j.get("$array", j.get("$tensor")))
        elif "$obj" in j:
            yield from numbers_in(list(j.get("fields", {}).values()))
        elif "$dict" in j:
            yield from numbers_in(list(j["$dict"].values()))


def _shows(value: float, decimals: int, produced: list[float], rtol: float, atol: float) -> bool:
    """Is ``value``, rounded to ``decimals``, one of ``produced`` within the function's stated
    tolerance? Compared in magnitude: prose writes signs its own way ("±0.866025",
    "(0.5 − 0.25) / 2")."""
    half = 0.5 * 10.0**-decimals * (1 + 1e-9)
    return any(
        math.isfinite(v) and abs(abs(v) - abs(value)) <= half + atol + rtol * abs(v)
        for v in produced
    )


def _run(fn, case: Case, ns: dict) -> dict:
    return outcome_of(fn, encode(list(case.args)), encode(dict(case.kwargs)), ns)


def anchors(fspec: FunctionSpec) -> list[Case]:
    return [c for c in fspec.cases if c.anchored]


def anchor_problems(fspec: FunctionSpec, ns: dict) -> list[str]:
    """One line per anchor that ``ns[fspec.name]`` (the reference) does not reproduce."""
    problems = []
    for c in anchors(fspec):
        got = _run(ns[fspec.name], c, ns)
        want = encode(c.expected)
        if "value" in got and close(want, got["value"], c.rtol, c.atol):
            continue
        problems.append(
            f"{fspec.name}/{c.id}: the reference gives {render_outcome(got)} but the anchor says "
            f"{render_outcome({'value': want})} (rtol {c.rtol:g}, atol {c.atol:g}; anchor: "
            f"{c.anchor}). Find which is wrong: recompute the anchor by hand; if it stands, "
            "the reference solution in solutions/ is wrong, and every expected value with it."
        )
    return problems


def reference_numbers(fspec: FunctionSpec, ns: dict) -> list[float]:
    """Every number the reference of ``fspec`` returns on its fixed cases."""
    return [
        v
        for c in fspec.cases
        if not c.hidden and c.kind != "invalid"
        for v in numbers_in(_run(ns[fspec.name], c, ns).get("value"))
    ]


def _defaults(fn) -> list:
    """The default values of ``fn``'s parameters (numbers a note may quote: "beta = 0.05")."""
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.default for p in params if p.default is not inspect.Parameter.empty]


def number_problems(fspec: FunctionSpec, ns: dict, others: list[float] = ()) -> list[str]:
    """One line per number quoted in a note or a diagnosis that the code does not produce.

    ``others``: numbers the assignment's other functions return on their fixed cases (a note
    may compare with them: "0.529008 (the exact KL is 0.368064)")."""
    fixed = [c for c in fspec.cases if not c.hidden]
    # a parameter the case leaves out takes its default: that value is an input of the case too
    defaults = list(numbers_in(encode(_defaults(ns[fspec.name]))))
    inputs = {
        c.id: list(numbers_in(encode([list(c.args), dict(c.kwargs)]))) + defaults for c in fixed
    }
    outputs = {c.id: list(numbers_in(_run(ns[fspec.name], c, ns).get("value"))) for c in fixed}
    problems = []
    for c in fixed:
        for text, value, decimals in shown_numbers(c.note):
            if not _shows(
                value, decimals, inputs[c.id] + outputs[c.id] + list(others), c.rtol, c.atol
            ):
                problems.append(
                    f"{fspec.name}/{c.id}: the note shows {text}, which is neither an input of "
                    f"the case nor in the reference's output {outputs[c.id]}: correct the note "
                    "(or the reference, if the note is right)"
                )
    everything = [v for c in fixed for v in inputs[c.id] + outputs[c.id]] + list(others)
    for m in fspec.mistakes:
        quoted = shown_numbers(m.diagnosis)
        if not quoted:
            continue
        mutant = m.build(ns)
        produced = everything + [
            v
            for c in fixed
            if c.kind != "invalid"
            for v in numbers_in(_run(mutant, c, ns).get("value"))
        ]
        for text, value, decimals in quoted:
            if not _shows(value, decimals, produced, fspec.rtol, fspec.atol):
                problems.append(
                    f"{fspec.name}: mistake {m.id}'s diagnosis shows {text}, which neither the "
                    "reference nor the mistake returns on a fixed case: correct the number, or "
                    "add the fixed case it is quoted from"
                )
    return problems
