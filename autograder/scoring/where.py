"""Where a learner's function goes wrong, read from which checks pass and which fail.

When no catalogued mistake, error shape or stated property explains some failed checks, the
feedback can still say *where* they fall, in words of what the notebook shows: a mode ("your
values are right on every check with `mode` = 'token-mean'; they are wrong on checks with
`mode` = 'seq-mean-token-sum-norm'"), an input function (the estimator passed in), whether an
optional argument is given, how an input is passed (a list, a numpy array, a torch tensor, a
bool mask), or which rule of the text an edge check is about. Nothing is run again: the line
reads the cases' inputs (their encoded form) and whether each check passed.

Say less rather than something untrue: a group of checks is called right only when *every*
check in it passes (failed checks another line explains included), a group is called wrong
only when one of the failed checks it has to explain lies in it, and the line is given only
when the right side holds at least two checks, one of them shown in the notebook. A feature
is named by what the text names (an argument, a mode string, an input function's name, a
container type, a case kind or rule), never by a generated value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from autograder.cases.spec import FunctionSpec

# No feature is a value of a number argument: with a handful of checks a value that happens to
# pass would read as the cause ("every check with beta = 0.05 passes"), and a generated number
# may not be named at all. Its sign is one (negative, zero, positive: words of the text, not a
# value), and so is a flag's True or False. A size is one only as "small inputs right, larger ones wrong" (see
# localise), the sizes named being those of checks the notebook shows.

_CONTAINERS = {"$array": "a numpy array", "$tensor": "a torch tensor"}


@dataclass(frozen=True)
class Where:
    key: tuple  # the feature: ("mode", name) | ("fn", name) | ("given", name) | ...
    right: tuple  # its values on which every check passes
    wrong: tuple  # its values with a failed check to explain
    cases: frozenset[int]  # the failed checks the line owns
    text: str

    @property
    def id(self) -> str:
        return "where:" + self.key[0]


def _plain_kwargs(inp: dict) -> dict:
    kw = inp.get("kwargs") or {}
    return kw.get("$dict", kw) if isinstance(kw, dict) else {}


def _container(v: Any) -> str | None:
    if isinstance(v, dict):
        for k, word in _CONTAINERS.items():
            if k in v:
                return word
        return None
    if isinstance(v, list):
        return "a list"
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return "a plain number"
    return None


def _size(v: Any) -> int | None:
    """How many entries a list or an array argument holds (along its first axis)."""
    if isinstance(v, list):
        return len(v)
    if isinstance(v, dict) and ("$array" in v or "$tensor" in v):
        shape = v.get("shape") or []
        return int(shape[0]) if shape else None
    return None


def features(fspec: FunctionSpec, i: int, inp: dict, arg_names) -> dict[tuple, Any]:
    """Case ``i``'s features, each one the notebook's words can name."""
    case = fspec.cases[i]
    kw = _plain_kwargs(inp)
    given = {name: v for name, v in kw.items()}
    for k, v in enumerate(inp.get("args") or []):
        given[arg_names[k] if k < len(arg_names) else f"argument {k + 1}"] = v
    out: dict[tuple, Any] = {}
    if case.kind == "edge" and case.rule:
        out[("rule", "")] = case.rule
    for name in list(arg_names) + [n for n in given if n not in arg_names]:
        v = given.get(name)
        out[("given", name)] = v is not None
        if isinstance(v, bool):
            out[("flag", name)] = v
        elif isinstance(v, (int, float)) and math.isfinite(v):
            # a number's sign only, never its value (see the note on _CONTAINERS)
            out[("sign", name)] = "negative" if v < 0 else "zero" if v == 0 else "positive"
        if isinstance(v, str):
            out[("mode", name)] = v
        elif isinstance(v, dict) and "$fn" in v:
            out[("fn", name)] = str(v["$fn"])
        size = _size(v)
        if size is not None:
            out[("size", name)] = size
        c = _container(v)
        if c is not None:
            out[("type", name)] = c
        if isinstance(v, dict) and ("$array" in v or "$tensor" in v):
            dtype = str(v.get("dtype", ""))
            kind = "bool" if dtype == "bool" else "int" if "int" in dtype else "float"
            out[("dtype", name)] = kind
    return out


# a string argument is a mode when it takes a few values, each of which a check the notebook
# shows holds: never a value only a generated case holds (a generated response's text)
MAX_MODES = 8


def _named_values_shown(fspec: FunctionSpec, groups: dict, right: list, wrong: list) -> bool:
    """May the values of a mode or input-function feature be named? Only where the feature
    takes at most MAX_MODES values and every value the line would name (``right`` and
    ``wrong``) is held by a fixed (shown) check."""
    if len(groups) > MAX_MODES:
        return False
    return all(any(not fspec.cases[i].hidden for i in groups[v]) for v in (*right, *wrong))


def _words(key: tuple, values: tuple) -> str:
    what, name = key
    if what in ("mode", "fn"):
        vals = " or ".join(repr(v) if what == "mode" else f"`{v}`" for v in values)
        return f"`{name}` = {vals}"
    if what == "given":
        (v,) = values
        return f"`{name}` given" if v else f"`{name}` left to its default"
    if what == "flag":
        return " or ".join(f"`{name}` = {v}" for v in values)
    if what == "sign":
        signs = {"negative": "< 0", "zero": "= 0", "positive": "> 0"}
        return " or ".join(f"`{name}` {signs[v]}" for v in values)
    if what == "size":
        return f"`{name}` holding " + " or ".join(str(v) for v in values) + " entries"
    if what == "type":
        return f"`{name}` passed as " + " or ".join(values)
    if what == "dtype":
        return f"`{name}` of " + " or ".join(f"{v} dtype" for v in values)
    if what == "rule":
        return " and ".join(f"the edge rule “{v.rstrip('.')}”" for v in values)
    return ""


# the order in which features are tried when several localise equally well: the text's own
# modes and functions first, then an argument given or not, then how an input is passed
_ORDER = {
    "mode": 0,
    "fn": 1,
    "flag": 2,
    "given": 3,
    "sign": 4,
    "rule": 5,
    "type": 6,
    "dtype": 7,
    "size": 8,
}


def localise(
    fspec: FunctionSpec,
    among: list[int],
    failed: set[int],
    todo: set[int],
    inputs: list[dict],
    arg_names,
    after: bool = False,
) -> Where | None:
    """The feature that best says where the failed checks ``todo`` fall, among the checks
    ``among`` (``failed``: every failed check, whatever explains it): a value of the feature
    on which every check passes (two or more, one shown) and the values that hold ``todo``.
    None when no feature does (every value has a failure, or ``todo`` is not all in checks
    that have the feature). ``after``: other lines explain the other failed checks."""
    todo = set(todo) & set(among)
    if not todo:
        return None
    feats = {i: features(fspec, i, inputs[i], arg_names) for i in among}
    keys = sorted({k for f in feats.values() for k in f}, key=lambda k: (_ORDER[k[0]], k))
    best = None
    for key in keys:
        if any(key not in feats[i] for i in todo):
            continue
        groups: dict[Any, list[int]] = {}
        for i in among:
            if key in feats[i]:
                groups.setdefault(feats[i][key], []).append(i)
        if len(groups) < 2:
            continue
        right = [v for v, idx in groups.items() if not failed & set(idx)]
        wrong = sorted({feats[i][key] for i in todo}, key=str)
        if key[0] in ("mode", "fn") and not _named_values_shown(fspec, groups, right, wrong):
            continue  # a string only a generated case holds (a response, a path) is no mode
        if key[0] == "size":
            # a size is named only as a check the notebook shows has it (never a generated
            # input), the failed checks only as having other sizes, and only when every size
            # from the smallest up to the largest named passes (small inputs right, larger
            # ones wrong: not one size that happens to pass)
            right = [v for v in right if any(not fspec.cases[i].hidden for i in groups[v])]
            if not right or min(wrong) <= max(right):
                continue
        if key[0] == "sign" and (len(wrong) != 1 or not set(groups[wrong[0]]) <= failed):
            # a sign splits the checks cleanly or is not named: one sign on which every check
            # fails, the others right (a data input's sign that only happens to line up with
            # the failures, some of each sign failing, would read as the cause)
            continue
        right_cases = [i for v in right for i in groups[v]]
        if len(right_cases) < 2 or all(fspec.cases[i].hidden for i in right_cases):
            continue
        # a place inside a part of the grade, not the part itself: the right side holds a
        # passing check of each kind the failures are of (that the formula fails and the
        # edge rules pass, the points per part already say)
        right_kinds = {fspec.cases[i].kind for i in right_cases}
        if not {fspec.cases[i].kind for i in todo} <= right_kinds:
            continue
        if key[0] == "given" and (len(wrong) != 1 or (not wrong[0]) not in right):
            continue
        spread = sum(len(groups[v]) for v in wrong)  # how many checks the wrong side holds
        rank = (spread, _ORDER[key[0]])
        if best is None or rank < best[0]:
            best = (rank, key, tuple(sorted(right, key=str)), tuple(wrong))
    if best is None:
        return None
    _, key, right, wrong = best
    if key[0] == "given":
        right = (not wrong[0],)
    shown = [fspec.cases[i].id for i in sorted(todo) if not fspec.cases[i].hidden][:3]
    where = f" (among them {', '.join(shown)})" if shown else ""
    n = len(todo)
    checks = f"{n} failed check{'s' if n > 1 else ''}"
    some = f"the other {checks}" if after else f"the {checks}"
    verb = "are" if n > 1 else "is"
    if key[0] == "rule":
        formula = [i for i in among if fspec.cases[i].kind == "value"]
        also = " and every check of the formula" if formula and not failed & set(formula) else ""
        k = len(right)
        text = (
            f"every check of {k} other edge rule{'s' if k > 1 else ''}{also} passes; {some} "
            f"{verb} all on {_words(key, wrong)}{where}: look at what your code does there"
        )
    elif key[0] == "size":
        text = (
            f"every check with {_words(key, right)} passes; {some} all have more entries "
            f"in `{key[1]}`{where}: look at what your code does with more of them"
        )
    else:
        text = (
            f"every check with {_words(key, right)} passes; {some} "
            f"{'all have' if n > 1 else 'has'} {_words(key, wrong)}{where}: look at what "
            "your code does in that case"
        )
    return Where(key, right, wrong, frozenset(todo), text)
