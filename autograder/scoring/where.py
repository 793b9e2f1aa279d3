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
# value), and so is a flag's True or False, and whether an input holds an entry exactly 0.

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
        # no feature is an input's size: "the checks with more entries fail" was true of the
        # checks on every set measured, and pointed at the wrong thing each time the slip was
        # about a value (a zero dropped, a clip, eps used as a floor): said less instead
        c = _container(v)
        if c is not None:
            out[("type", name)] = c
        if isinstance(v, dict) and ("$array" in v or "$tensor" in v):
            dtype = str(v.get("dtype", ""))
            kind = "bool" if dtype == "bool" else "int" if "int" in dtype else "float"
            out[("dtype", name)] = kind
            flat = v.get("$array", v.get("$tensor"))
            mask_like = kind in ("bool", "int") and isinstance(flat, list) and flat
            if mask_like and all(x in (0, 1) for x in flat):
                # a mask (bool, or 0/1 integers; a float array of 0s and 1s may be data):
                # whether it leaves anything out (padding, an incorrect response)
                out[("masked", name)] = not all(flat)
            elif kind == "float" and isinstance(flat, list) and flat:
                # numbers: whether one of them is exactly 0 (a value the text gives a rule
                # for, a change of 0 is LLD, a zero probability; never a generated value)
                out[("zero", name)] = any(type(x) in (int, float) and x == 0 for x in flat)
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
    if what == "zero":
        return " or ".join(
            f"some entry of `{name}` exactly 0" if v else f"no entry of `{name}` 0" for v in values
        )
    if what == "masked":
        return " or ".join(
            f"some entry of `{name}` False (0)" if v else f"every entry of `{name}` True (1)"
            for v in values
        )
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
    "masked": 5,
    "zero": 6,
    "rule": 7,
    "type": 8,
    "dtype": 9,
}


def localise(
    fspec: FunctionSpec,
    among: list[int],
    failed: set[int],
    todo: set[int],
    inputs: list[dict],
    arg_names,
    after: bool = False,
    default_check=None,
) -> Where | None:
    """The feature that best says where the failed checks ``todo`` fall, among the checks
    ``among`` (``failed``: every failed check, whatever explains it): a value of the feature
    on which every check passes (two or more, one shown) and the values that hold ``todo``.
    None when no feature does (every value has a failure, or ``todo`` is not all in checks
    that have the feature). ``after``: other lines explain the other failed checks.
    ``default_check(name, checks)``: whether the learner's results with ``name`` left to its
    default are the expected ones on those checks (none: an argument given is not named)."""
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
        if key[0] in ("sign", "zero", "type", "dtype") and (
            len(wrong) != 1 or not set(groups[wrong[0]]) <= failed
        ):
            # a sign (a zero, a container, a dtype) splits the checks cleanly or is not named:
            # one value on which every check fails, the others right (a data input's sign that
            # only happens to line up with the failures, some of each failing, would read as
            # the cause)
            continue
        if key[0] == "zero" and not wrong[0]:
            # that the checks with no zero fail says nothing of zeros (most checks hold none):
            # only "every check holding a zero fails" names one
            continue
        if key[0] in ("zero", "type", "dtype") and len(groups[wrong[0]]) < 2:
            # zeros are common in data (a one-hot, a hidden state), and how an input is passed
            # varies from check to check with nothing to do with the slip: one failed check that
            # holds a zero, or has some container or dtype of its own, says nothing of them
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
        if key[0] == "given" and wrong[0]:
            # "every failed check gives it" only where the code is right with it left to its
            # default on those checks (``default_check``, from the probes): otherwise the checks
            # may only happen to give it, and the slip lies elsewhere
            on_wrong = {i for i in todo if feats[i].get(key)}
            if default_check is None or not default_check(key[1], on_wrong):
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
    else:
        text = (
            f"every check with {_words(key, right)} passes; {some} "
            f"{'all have' if n > 1 else 'has'} {_words(key, wrong)}{where}: look at what "
            "your code does in that case"
        )
    return Where(key, right, wrong, frozenset(todo), text)


# -- which part of the result ---------------------------------------------------------------------
#
# A result with parts (a record's fields, a list of records, a few values returned together)
# can be right in some parts on every check and wrong only in others: "your `task_reward`,
# `beta` and `shaped_reward` are right on every check; the failed checks differ only in
# `mean_log_ratio`". Read from the expected and the learner's outcomes, part by part; a part's
# name is a field name of the record the text defines or its place in the result (the last
# item of a list, or the items before it; the first, second … value returned), never a value.

_ORDINALS = ("first", "second", "third", "fourth")
_LAST, _BEFORE = "last", "before"


def _parts(value: Any, tuple_len: int | None) -> dict[tuple, Any] | None:
    """The encoded ``value`` cut into named parts: {(place, field): part}, or None when it has
    no parts this line can name. ``tuple_len``: the result is a few values returned together
    (a list of that length on every check)."""
    if isinstance(value, dict) and "$obj" in value:
        return {(None, f): v for f, v in (value.get("fields") or {}).items()}
    if not isinstance(value, list) or not value:
        return None
    if tuple_len is not None:
        if len(value) != tuple_len:
            return None
        return {(k, None): v for k, v in enumerate(value)}
    if not all(isinstance(v, dict) and "$obj" in v for v in value):
        return None
    out: dict[tuple, Any] = {}
    for k, item in enumerate(value):
        place = _LAST if k == len(value) - 1 else _BEFORE
        for f, v in (item.get("fields") or {}).items():
            out.setdefault((place, f), []).append(v)
    return out


def _tuple_len(expected: list[dict]) -> int | None:
    """The length of the result when it is a few plain values returned together: a list of
    the same length (2 to 4) of numbers or arrays on every check that returns."""
    lens = set()
    for e in expected:
        v = e.get("value")
        if "value" not in e:
            continue
        if not isinstance(v, list) or any(isinstance(x, (list, str, bool)) for x in v):
            return None
        if any(isinstance(x, dict) and "$obj" in x for x in v):
            return None
        lens.add(len(v))
    if len(lens) != 1:
        return None
    (n,) = lens
    return n if 2 <= n <= len(_ORDINALS) else None


def _part_words(place, field, tuple_len) -> str:
    if tuple_len is not None:
        return f"the {_ORDINALS[place]} value returned"
    if place is None:
        return f"`{field}`"
    where = "the last item" if place == _LAST else "every item before the last"
    return f"`{field}` of {where}"


def _join_words(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def parts(
    fspec: FunctionSpec,
    among: list[int],
    failed: set[int],
    todo: set[int],
    expected: list[dict],
    got: list[dict],
    after: bool = False,
) -> Where | None:
    """Which parts of the result the failed checks ``todo`` get wrong, when some part is right
    on every check of ``among`` that returns one (at least two, one shown in the notebook) and
    the failed checks differ from the expected result in the other parts only. None when the
    result has no parts, a failed check's result is not cut the same way (a list of another
    length, an error), or no part is right everywhere."""
    from autograder.cases.compare import same_outcome

    todo = set(todo) & set(among)
    if not todo:
        return None
    tl = _tuple_len([expected[i] for i in among])
    right_on: dict[tuple, list[int]] = {}
    wrong_on: dict[tuple, set[int]] = {}
    for i in among:
        if "value" not in expected[i]:
            if i in todo:
                return None
            continue
        pe = _parts(expected[i]["value"], tl)
        pg = _parts(got[i].get("value"), tl) if "value" in got[i] else None
        if (
            pe is None
            or pg is None
            or set(pe) != set(pg)
            or (
                tl is None
                and isinstance(expected[i]["value"], list)
                and len(expected[i]["value"]) != len(got[i]["value"])
            )
        ):
            if i in todo or i in failed:
                return None
            continue
        c = fspec.cases[i]
        for key, v in pe.items():
            if same_outcome({"value": v}, {"value": pg[key]}, c.rtol, c.atol):
                right_on.setdefault(key, []).append(i)
            else:
                wrong_on.setdefault(key, set()).add(i)
    wrong = {k for k, idx in wrong_on.items() if idx & todo}
    right = {
        k
        for k, idx in right_on.items()
        if k not in wrong_on and len(idx) >= 2 and any(not fspec.cases[i].hidden for i in idx)
    }
    if not wrong or not right or any(not (wrong_on.get(k, set()) <= failed) for k in wrong):
        return None
    # every failed check of todo differs in a wrong part (a check failing for another reason,
    # a part that is right here but wrong elsewhere, is not this line's)
    if not all(any(i in wrong_on.get(k, ()) for k in wrong) for i in todo):
        return None

    def words(keys) -> list[str]:
        out = []
        fields = sorted({f for _, f in keys}, key=str)
        for f in fields:
            places = sorted((p for p, g in keys if g == f), key=str)
            every = {p for p, g in (set(right_on) | set(wrong_on)) if g == f}
            if f is not None and len(places) == len(every) and len(every) > 1:
                out.append(f"`{f}`")
            else:
                out += [_part_words(p, f, tl) for p in places]
        return out

    shown = [fspec.cases[i].id for i in sorted(todo) if not fspec.cases[i].hidden][:3]
    where = f" (among them {', '.join(shown)})" if shown else ""
    n = len(todo)
    checks = f"{n} failed check{'s' if n > 1 else ''}"
    some = f"the other {checks}" if after else f"the {checks}"
    r_words, w_words = words(right), words(wrong)
    verb = "is" if len(r_words) == 1 else "are"
    text = (
        f"in your result, {_join_words(r_words)} {verb} right on every check; {some} "
        f"differ{'s' if n == 1 else ''} only in {_join_words(w_words)}{where}: look at how your code computes "
        f"{'that' if len(w_words) == 1 else 'those'}"
    )
    return Where(
        ("part", ""),
        tuple(sorted(map(str, right))),
        tuple(sorted(map(str, wrong))),
        frozenset(todo),
        text,
    )
