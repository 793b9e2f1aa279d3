"""What of a learner's exception message feedback may show.

Feedback shows the message of an exception the learner's code raised on a *fixed* case (its
inputs are public), never on a generated one. Even then the message is the learner's to
choose: code that reached reference material (the reference source of a function, or a
generated input or expected value it met earlier in the same process) could spell it out in
a message, a piece per case. So before a message is shown, every part of it that matches
such material is cut out and replaced by ``[…]``:

    reference text   a run of REF_RUN or more characters (spaces folded) found in the
                     reference solution's cells and nowhere in the released notebook
    identifiers      a name of REF_NAME or more characters used in the reference solution's
                     cells and nowhere in the released notebook
    hidden values    a number written with HIDDEN_DIGITS or more significant digits that
                     rounds from a generated case's input or expected value

What is left is what the learner wrote or the public notebook explains. An encoding the
checks cannot read (base64, reversed text) is not caught here: the reference source is
kept out of the learner's process in the first place, and a generated input stays out of
the messages shown because they come from fixed cases only.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REF_RUN = 20  # characters: shorter runs are common code ("return float(", "np.asarray(")
REF_NAME = 5  # characters: shorter names are common words
HIDDEN_DIGITS = 3  # significant digits: fewer could be any small count or size
CUT = "[…]"

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _fold(text: str) -> str:
    return " ".join(text.split())


@functools.lru_cache(maxsize=32)
def _material(assignment: str, root: str | None) -> tuple[str, str, frozenset[str]]:
    """(reference text folded, public text folded, reference-only names) of ``assignment``;
    empty when its notebooks cannot be read."""
    from autograder.notebooks import course_values, notebook

    if course_values.active(Path(root) if root else None):
        # the course form holds no reference solution (only the signatures of its outline):
        # no code of the learner's can have reached one, so there is no reference text to cut
        return "", "", frozenset()
    try:
        ref = notebook.read(notebook.source_path(assignment, Path(root) if root else None))
        pub = notebook.read(notebook.release_path(assignment, Path(root) if root else None))
    except (OSError, ValueError, KeyError):
        return "", "", frozenset()
    solution = "\n".join(src for _, _, src in notebook.code_cells(ref, {"solution"}))
    public = "\n".join(str(c.source) for c in pub.cells)
    public_names = set(_NAME.findall(public))
    names = frozenset(
        n for n in _NAME.findall(solution) if len(n) >= REF_NAME and n not in public_names
    )
    return _fold(solution), _fold(public), names


@functools.lru_cache(maxsize=8)
def _runs(text: str) -> frozenset[str]:
    """Every run of REF_RUN characters of ``text``: a window is in the text exactly when it is
    one of them, found by a set look-up instead of a search of the whole text."""
    return frozenset(text[i : i + REF_RUN] for i in range(len(text) - REF_RUN + 1))


@functools.lru_cache(maxsize=4096)
def _reference_cuts(text: str, assignment: str, root: str | None) -> tuple[tuple[int, int], ...]:
    """The spans of the folded message ``text`` that are reference material: runs of the
    reference's text the public notebook does not hold, and reference-only names. Kept per
    text: a class's messages repeat (a stub's NotImplementedError, the same slip's error)."""
    ref, public, names = _material(assignment, root)
    if not ref:
        return ()
    ref_runs = _runs(ref)  # the public text is searched only for the few windows found here
    spans = []
    for i in range(len(text) - REF_RUN + 1):
        window = text[i : i + REF_RUN]
        if window in ref_runs and window not in public:
            spans.append((i, i + REF_RUN))
    for m in _NAME.finditer(text):
        if m.group() in names:
            spans.append((m.start(), m.end()))
    return tuple(spans)


def hidden_numbers(values: Iterable[Any]) -> list[float]:
    """The finite numbers in ``values`` (encoded inputs and outcomes), sorted: what
    :func:`clean_message` looks for. Worked out once for all the messages of one function."""
    return sorted(_hidden_numbers(values))


def _hidden_numbers(values: Iterable[Any]) -> list[float]:
    out: list[float] = []

    def walk(j: Any) -> None:
        if isinstance(j, bool):
            return
        if isinstance(j, (int, float)):
            if math.isfinite(j):
                out.append(float(j))
        elif isinstance(j, dict):
            for v in j.values():
                walk(v)
        elif isinstance(j, list):
            for v in j:
                walk(v)

    for v in values:
        walk(v)
    return out


def _significant(text: str) -> int:
    mantissa = re.split(r"[eE]", text.lstrip("+-"))[0].replace(".", "").lstrip("0")
    return len(mantissa)


def _written(text: str) -> tuple[float, float] | None:
    """``text`` as a number and half a unit in the last digit it shows; None when it is not
    a number, or beyond a float's range (no finite value rounds to it, and 10.0 ** its
    exponent would overflow)."""
    try:
        x = float(text)
    except ValueError:
        return None
    if not math.isfinite(x):
        return None
    mantissa, _, exp = text.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return x, 0.5 * 10.0 ** (-decimals + (int(exp) if exp else 0))


def _rounds_to(x: float, half_ulp: float, value: float) -> bool:
    return abs(x - value) <= half_ulp * (1 + 1e-9) or abs(x + value) <= half_ulp * (1 + 1e-9)


def _rounds_from(text: str, value: float) -> bool:
    """Could ``text`` be ``value`` written with the digits ``text`` has?"""
    written = _written(text)
    return written is not None and _rounds_to(*written, value)


def _matches_a_number(text: str, numbers: list[float]) -> bool:
    """Does ``text`` round from one of ``numbers`` (sorted), or from its negation? Only the
    numbers near ``x`` or ``-x`` can (a window a little wider than half a unit in the last
    digit ``text`` shows); each of those is checked as :func:`_rounds_from` checks it."""
    written = _written(text)
    if written is None:
        return False
    x, half_ulp = written
    reach = 2 * half_ulp
    for centre in (x, -x):
        lo = bisect.bisect_left(numbers, centre - reach)
        hi = bisect.bisect_right(numbers, centre + reach)
        if any(_rounds_to(x, half_ulp, v) for v in numbers[lo:hi]):
            return True
    return False


def clean_message(
    message: str,
    assignment: str,
    hidden: Iterable[Any] = (),
    root: Path | None = None,
    numbers: list[float] | None = None,
) -> str:
    """``message`` with every part that matches reference or hidden material cut out
    (``[…]`` in its place); ``hidden``: the generated cases' encoded inputs and expected
    outcomes, or ``numbers``: :func:`hidden_numbers` of them, worked out already."""
    if not message:
        return message
    text = _fold(message)
    cut = [False] * len(text)
    for start, end in _reference_cuts(text, assignment, str(root) if root else None):
        cut[start:end] = [True] * (end - start)
    if numbers is None:
        numbers = hidden_numbers(hidden)
    if numbers:
        for m in _NUMBER.finditer(text):
            if _significant(m.group()) >= HIDDEN_DIGITS and _matches_a_number(m.group(), numbers):
                cut[m.start() : m.end()] = [True] * (m.end() - m.start())
    if not any(cut):
        return message
    out, i = [], 0
    while i < len(text):
        if cut[i]:
            while i < len(text) and cut[i]:
                i += 1
            out.append(CUT)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
