"""What the learner's function does when its inputs change in one way the text states.

The probes of a function (:mod:`autograder.assignments.probes`) change one case's inputs in
one stated way: the two distributions swapped, the padding refilled, the batch given twice,
a constant added to every reward. The learner's function runs on the changed inputs as well,
only when one of its checks failed and after all of them (a probe never costs a point: the
graded outcomes are taken before any probe runs), and this module compares its two results
with the relation the text states: "the same", "negated", "different", "K times", "plus C",
"2·C minus". A relation the learner's results break, on a failed check, is a line of its
feedback in the text's own words: "padded entries never count, whatever they hold; your
result changes when the padded entries are set to 7.5, on 3 of the 4 failed checks".

Say less rather than something untrue:

- a probe is judged only where the reference obeys its relation on the same inputs (its
  outcome on the changed inputs is computed like every expected outcome), and only where both
  of the learner's results are values (not an exception);
- broken means beyond a margin far wider than the function's tolerance (float32 arithmetic or
  a stabiliser never breaks a relation), and "differs" is broken only where the learner's two
  results agree within the tolerance while the reference's differ beyond the margin;
- a line owns only the failed checks whose inputs it changed and whose relation broke.

A probe of a generated case is generated too: its line counts such checks and never shows
their inputs or values. A probe of a fixed (shown) case may show the learner's two results.

A probe input is an input dict like a case's (``{"id", "args", "kwargs"}``) with
``"probe": {"base": <index of the case it changes>, "id", "change", "says", "relation"}``;
everything a line needs travels with it, so the course form (which holds no case module)
scores with the probes its values bundle carries.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from autograder.cases import seeds
from autograder.cases.codec import decode, encode
from autograder.cases.spec import FunctionSpec

# broken means beyond this (relative to the scale of the values compared, or absolute): wide
# enough that a lower precision (bfloat16 keeps 8 bits, about 4e-3 relative) never breaks a
# relation by its rounding alone, far narrower than what a different formula moves
RTOL = 1e-2
ATOL = 1e-4


def probe_inputs(
    assignment: str,
    fspec: FunctionSpec,
    secret: str,
    student: str | None,
    inputs: list[dict],
) -> list[dict]:
    """The probe inputs of ``fspec``'s cases (``inputs``: their encoded inputs, from
    evaluate.materialize with the same secret and student), each served the callees its case
    is (their reference outputs on the probe's arguments: `drills grade` runs a function
    served a graded callee in children apart from that callee, probes too)."""
    from autograder.assignments import probes as catalogue
    from autograder.scoring import served

    found = catalogue.probes_of(assignment, fspec.name)
    out = default_probes(assignment, fspec, inputs)
    for i, case in enumerate(fspec.cases):
        usable = [p for p in found if case.kind in p.kinds]
        if not usable:
            continue
        if case.make is not None:  # drawn as evaluate.materialize draws it
            rng = seeds.case_rng(secret, assignment, f"{fspec.name}/{case.id}", student)
            drawn = tuple(case.make(rng))
        else:
            drawn = tuple(case.args)
        for probe in usable:
            # a copy for each probe: a change never sees another's objects, nor the case's own
            args = copy.deepcopy(drawn)
            try:
                changed = probe.apply(args, dict(case.kwargs))
            except Exception:  # noqa: BLE001 (a change that does not fit these inputs says nothing)
                changed = None
            if changed is None:
                continue
            new_args, new_kwargs, extra = (*changed, {})[:3]
            try:
                encoded = {
                    "id": f"{case.id}~{probe.id}",
                    "args": encode(list(new_args)),
                    "kwargs": encode(dict(new_kwargs)),
                }
            except Exception:  # noqa: BLE001
                continue
            encoded["probe"] = {
                "base": i,
                "id": probe.id,
                "change": probe.change,
                "says": probe.says,
                "relation": probe.relation,
                **({"exchange": True} if probe.exchange else {}),
                **extra,
            }
            out.append(encoded)
    # the callees the reference calls (provided helpers, graded functions) answer from their
    # tables, as on the cases: a probe measures this function, not the learner's callees
    if out and any(inp.get("serve") for inp in inputs):
        served.attach(assignment, fspec.name, out)
    return out


# the relation of a default probe: none to judge; the probe says whether the learner's result
# with an argument left to its default is the expected one (see default_agrees)
DEFAULT = "default"


def _given_names(inp: dict, arg_names) -> set[str]:
    from autograder.scoring.where import _plain_kwargs

    names = {n for n, v in _plain_kwargs(inp).items() if v is not None}
    for k, v in enumerate(inp.get("args") or []):
        if v is not None and k < len(arg_names):
            names.add(arg_names[k])
    return names


def _dropped(inp: dict, name: str, arg_names) -> dict | None:
    """``inp`` with the argument ``name`` left out (a keyword removed, or the last positional
    argument dropped); None where it is passed by position with others after it."""
    from autograder.scoring.where import _plain_kwargs

    kwargs, plain = inp.get("kwargs") or {}, _plain_kwargs(inp)
    args = list(inp.get("args") or [])
    if name in plain:
        rest = {k: v for k, v in plain.items() if k != name}
        kw = {"$dict": rest} if isinstance(kwargs, dict) and "$dict" in kwargs else rest
        return {"args": args, "kwargs": kw}
    if name in arg_names:
        k = list(arg_names).index(name)
        if len(args) == k + 1:
            return {"args": args[:k], "kwargs": kwargs}
    return None


def default_probes(assignment: str, fspec: FunctionSpec, inputs: list[dict]) -> list[dict]:
    """For each check of the formula or an edge rule that gives an argument some other check
    leaves to its default: the same inputs with that argument left out. They tell whether a
    learner's failures on the checks that give it are about it (the result with it left out is
    the expected one) or only happen to fall there (it is wrong without it as well)."""
    from autograder.notebooks import notebook

    try:
        arg_names = notebook.parameters(assignment, fspec.name)
    except Exception:  # noqa: BLE001 (no parameter names: no argument to leave out)
        return []
    idx = [i for i, c in enumerate(fspec.cases) if c.kind in ("value", "edge") and i < len(inputs)]
    if not idx or not arg_names:
        return []
    sets = {i: _given_names(inputs[i], arg_names) for i in idx}
    optional = set().union(*sets.values()) - set.intersection(*sets.values())
    out = []
    for i in idx:
        for name in sorted(optional & sets[i]):
            changed = _dropped(inputs[i], name, arg_names)
            if changed is None:
                continue
            changed["id"] = f"{inputs[i].get('id', fspec.cases[i].id)}~default:{name}"
            changed["probe"] = {
                "base": i,
                "id": f"default:{name}",
                "change": f"`{name}` is left to its default",
                "says": "",
                "relation": DEFAULT,
                "default_of": name,
            }
            out.append(changed)
    return out


def default_agrees(fspec: FunctionSpec, name: str, bad: set[int], probes: list[dict]) -> bool:
    """Do the learner's results with ``name`` left to its default agree with the expected ones
    on the failed checks ``bad`` that give it (one such check at least, and every one of them
    where the probe ran)? Then the failures are about ``name``: without it the code is right."""
    from autograder.cases.compare import same_outcome

    seen = False
    for p in probes:
        meta = p.get("probe") or {}
        i = meta.get("base")
        if meta.get("default_of") != name or i not in bad or "got" not in p:
            continue
        case = fspec.cases[i]
        if not same_outcome(p.get("expected", {}), p["got"], case.rtol, case.atol):
            return False
        seen = True
    return seen


def _values(outcome: dict) -> np.ndarray | None:
    """An outcome's value as a flat float array (a number, an array, a tuple of numbers), or
    None (an exception, a record, a string)."""
    if not isinstance(outcome, dict) or "value" not in outcome:
        return None
    from autograder.scoring.stated import _RECORDS, _fields

    try:
        v = decode(outcome["value"], _RECORDS)
    except Exception:  # noqa: BLE001
        return None
    records = v if isinstance(v, (list, tuple)) else [v]
    if records and all(_fields(r) is not None for r in records):
        # records (04's TurnReward): every numeric field, record by record, by field name
        flat = []
        for r in records:
            for _, x in sorted(_fields(r).items()):
                if isinstance(x, bool) or not isinstance(x, (int, float)):
                    return None
                flat.append(float(x))
        return np.asarray(flat, dtype=float)
    try:
        if hasattr(v, "detach"):
            v = v.detach().cpu().double().numpy()
        if isinstance(v, (list, tuple)) and any(isinstance(x, (list, tuple)) for x in v):
            v = np.concatenate([np.ravel(np.asarray(x, dtype=float)) for x in v])
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        return None
    if a.dtype.kind not in "fiub":
        return None
    return a.ravel()


def _close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    if a.shape != b.shape:
        return False
    same_inf = (a == b) | (np.isnan(a) & np.isnan(b))
    finite = np.isfinite(a) & np.isfinite(b)
    near = np.zeros(a.shape, dtype=bool)
    near[finite] = np.abs(a[finite] - b[finite]) <= atol + rtol * np.abs(b[finite])
    return bool(np.all(same_inf | near))


def _target(relation: str, base: np.ndarray, factors=None) -> np.ndarray | None:
    """What the changed inputs' result must be, from the base result, under ``relation``
    (None for "differs", which names no value; ``factors``: the per-entry factors of
    "scaled:entries")."""
    name, _, arg = relation.partition(":")
    with np.errstate(all="ignore"):
        if name == "same":
            return base
        if name == "negated":
            return -base
        if name == "scaled" and arg == "entries":
            # one factor per entry; None: an entry the relation says nothing of (NaN here,
            # left out of the comparison)
            f = np.asarray(
                [np.nan if x is None else x for x in (factors or [])], dtype=float
            ).ravel()
            return f * base if f.shape == base.shape else None
        if name == "scaled":
            return float(arg) * base
        if name == "shift":
            return base + float(arg)
        if name == "mirror":
            return 2 * float(arg) - base
        if name == "reversed":  # along the first axis of the result (``factors``: its shape)
            shape = tuple(factors) if factors else base.shape
            if int(np.prod(shape)) != base.size:
                return None
            return base.reshape(shape)[::-1].ravel().copy()
        if name == "affine":
            a, _, b = arg.partition(":")
            return float(a) * base + float(b)
        if name == "affine-offset":  # ``factors``: [the offset], computed by the probe
            if not factors or factors[0] is None:
                return None
            return float(arg) * base + float(factors[0])
    return None


def obeys(
    relation: str,
    base: np.ndarray,
    changed: np.ndarray,
    rtol: float,
    atol: float,
    factors=None,
) -> bool:
    """Do ``base`` and ``changed`` (the results before and after the change) obey
    ``relation`` within ``rtol``/``atol``? ("differs": they differ beyond it.)"""
    if relation == "differs":
        return not _close(changed, base, rtol, atol)
    if relation == "not-above":
        if changed.shape != base.shape:
            return False
        with np.errstate(all="ignore"):
            return bool(np.all(changed <= base + atol + rtol * np.abs(base)))
    target = _target(relation, base, factors)
    if target is None or target.shape != changed.shape:
        return False
    if relation == "scaled:entries":
        free = np.array([x is None for x in factors or []], dtype=bool)
        if free.shape == target.shape:
            return _close(changed[~free], target[~free], rtol, atol)
    return _close(changed, target, rtol, atol)


def _shape(outcome: dict) -> list[int] | None:
    """The shape of an outcome's array value (a list of numbers: its length), else None."""
    v = outcome.get("value") if isinstance(outcome, dict) else None
    if isinstance(v, dict) and ("$array" in v or "$tensor" in v):
        return [int(n) for n in v.get("shape") or []]
    if isinstance(v, list):
        return [len(v)]
    return None


def outcomes_obey(
    relation: str, base: dict, changed: dict, rtol: float, atol: float, factors=None
) -> bool | None:
    """Do two outcomes (before and after the change) obey ``relation``? None where it cannot
    be told (an exception, a value that is not numbers, text or None)."""
    if _plain(base) and _plain(changed):
        return base == changed if relation == "same" else None
    b, c = _values(base), _values(changed)
    if b is None or c is None:
        return None
    if relation == "reversed":
        factors = _shape(base)
    return obeys(relation, b, c, rtol, atol, factors)


def broken(
    fspec: FunctionSpec,
    failed: set[int],
    expected: list[dict],
    got: list[dict],
    probes: list[dict],
) -> list[tuple[dict, set[int], list[tuple[int, str]]]]:
    """Each probe (by id) whose relation the learner's results break on failed checks: its
    description, the failed checks it breaks on, and for the fixed ones (by case index) the
    learner's two results in words. ``probes``: probe inputs each with "expected" (the
    reference's outcome) and "got" (the learner's).

    The reference must obey the relation (a "differs" beyond the margin, any other within the
    function's tolerance); the learner breaks it where its two results do not obey it (a
    "differs" within the tolerance, any other beyond the margin)."""
    by_id: dict[str, tuple[dict, set[int], list[tuple[int, str]]]] = {}
    for p in probes:
        meta = p.get("probe") or {}
        i = meta.get("base")
        if not isinstance(i, int) or i not in failed or i >= len(fspec.cases):
            continue
        case = fspec.cases[i]
        relation, factors = str(meta.get("relation", "")), meta.get("factors")
        if relation == "identify":
            continue  # no relation to break: read by exchanged()
        mine, theirs = got[i], p.get("got", {})
        tol, margin = (case.rtol, case.atol), (RTOL, ATOL)
        ref_tol, own_tol = (margin, tol) if relation == "differs" else (tol, margin)
        if (
            outcomes_obey(relation, expected[i], p.get("expected", {}), *ref_tol, factors)
            is not True
        ):
            continue  # the reference does not show the relation here (an inf, a NaN)
        if _plain(mine) != _plain(expected[i]):
            continue
        g_b, g_p = _values(mine), _values(theirs)
        if not _plain(mine):
            if g_b is None or g_p is None:
                continue
            e_b, e_p = _values(expected[i]), _values(p.get("expected", {}))
            if (
                _shape(mine) != _shape(expected[i])
                or _shape(theirs) != _shape(p.get("expected", {}))
                or (e_b is not None and g_b.shape != e_b.shape)
                or (e_p is not None and g_p.shape != e_p.shape)
            ):
                continue  # a result of another shape: its shape is what is wrong, not a relation
            if relation == "differs" and not np.any(g_b) and not np.any(g_p):
                continue  # 0 before and after: a result stuck at 0 "stays the same" under any change
            if relation != "same" and g_b.shape != g_p.shape:
                continue  # entry factors, a scale, an order: read on two results of one shape
            if not np.all(np.isfinite(g_b)):
                continue  # a NaN or inf result "stays the same" or not: it says nothing here
            if relation != "differs":
                # the margin is relative to the scale of the whole result too: an entry near 0
                # beside entries near 1 (one_hot − softmax) moves by a lower precision's rounding
                # of the large ones, which breaks nothing
                both = np.concatenate([g_b, g_p])
                both = both[np.isfinite(both)]
                scale = float(np.max(np.abs(both))) if both.size else 0.0
                own_tol = (RTOL, ATOL + RTOL * scale)
        if outcomes_obey(relation, mine, theirs, *own_tol, factors) is not False:
            continue
        entry = by_id.setdefault(str(meta.get("id")), (meta, set(), []))
        entry[1].add(i)
        if case.hidden:
            continue
        if _plain(mine):
            entry[2].append((i, f"{case.id}: yours {_text(mine)} before, {_text(theirs)} after"))
            continue
        labels = _labels(mine)
        if labels is not None and len(labels) == g_b.size == g_p.size:
            # records: the first field that does not follow, by its name
            k = _first_off(relation, g_b, g_p, factors)
            entry[2].append(
                (
                    i,
                    f"{case.id}: {labels[k]} is {_num(g_b[k : k + 1])} before, "
                    f"{_num(g_p[k : k + 1])} after",
                )
            )
        else:
            entry[2].append((i, f"{case.id}: {_pair(g_b, g_p)}"))
    return sorted(by_id.values(), key=lambda e: -len(e[1]))


def exchanged(
    fspec: FunctionSpec,
    failed: set[int],
    expected: list[dict],
    got: list[dict],
    probes: list[dict],
) -> tuple[dict, set[int]] | None:
    """An exchange of two inputs that turns the learner's results into the expected ones: on
    every failed check where the probe ran and says something (the reference's result changes
    when the two are exchanged), the learner's result on the exchanged inputs is the expected
    result of the original inputs. Then the learner computes the text's formula with the two
    the wrong way round. Returns the probe's description and the failed checks it explains;
    None when no exchange does this on every such check (say less rather than something
    untrue: one failed check it does not fit, and no line)."""
    seen: dict[str, tuple[dict, set[int], bool]] = {}
    for p in probes:
        meta = p.get("probe") or {}
        i = meta.get("base")
        identify = meta.get("relation") == "identify"
        if not (meta.get("exchange") or identify) or not isinstance(i, int) or i not in failed:
            continue
        if i >= len(fspec.cases) or fspec.cases[i].kind not in ("value", "edge"):
            continue
        theirs, ref_changed = p.get("got", {}), p.get("expected", {})
        e, e2, g2 = _values(expected[i]), _values(ref_changed), _values(theirs)
        if e is None or e2 is None or e.shape != e2.shape:
            continue
        if _close(e2, e, RTOL, ATOL):
            continue  # the exchange leaves the expected result as it is here: it says nothing
        key = str(meta.get("id"))
        entry = seen.setdefault(key, (meta, set(), True))
        if identify:  # the learner's own result is the formula's on the changed inputs
            g = _values(got[i])
            fits = g is not None and g.shape == e2.shape and _close(g, e2, RTOL, ATOL)
        else:  # an exchange: on the exchanged inputs the learner gives the original's result
            fits = g2 is not None and g2.shape == e.shape and _close(g2, e, RTOL, ATOL)
        if fits:
            entry[1].add(i)
        else:
            seen[key] = (entry[0], entry[1], False)
    found = [(meta, hit) for meta, hit, every in seen.values() if every and hit]
    if not found:
        return None
    return max(found, key=lambda e: len(e[1]))


def exchanged_text(meta: dict, hit: set[int], failed: int) -> str:
    """The feedback line of an exchange that turns the learner's results into the expected
    (or of a change whose formula's results are the learner's); ``failed``: how many value
    checks failed."""
    n = len(hit)
    where = "on every failed check" if n == failed else f"on {n} of the {failed} failed checks"
    if meta.get("relation") == "identify":
        return (
            f"your values are the formula's when {meta.get('change')}, {where} of its values: "
            "your code makes that change somewhere"
        )
    change = str(meta.get("change", "")).replace(" are swapped", "")
    return (
        f"two inputs the wrong way round: given {change} the other way round, your function "
        f"returns the expected result of the original inputs, {where} of its values; check "
        "which of the two goes where in your formula"
    )


def _labels(outcome: dict) -> list[str] | None:
    """For a list of records, the name of each entry _values gives ("`mean_log_ratio` of item
    2"); None for anything else."""
    from autograder.scoring.stated import _RECORDS, _fields

    try:
        v = decode(outcome["value"], _RECORDS)
    except Exception:  # noqa: BLE001
        return None
    if not isinstance(v, (list, tuple)) or not v or any(_fields(r) is None for r in v):
        return None
    return [f"`{name}` of item {k + 1}" for k, r in enumerate(v) for name in sorted(_fields(r))]


def _first_off(relation: str, base: np.ndarray, changed: np.ndarray, factors) -> int:
    """The first entry at which ``changed`` does not follow ``relation`` from ``base``."""
    for k in range(base.size):
        f = None
        if factors is not None and len(factors) == base.size:
            f = [factors[k]]
            if f[0] is None:
                continue
        if not obeys(relation, base[k : k + 1], changed[k : k + 1], RTOL, ATOL, f):
            return k
    return 0


def _plain(outcome: dict) -> bool:
    """An outcome whose value is a text or None (compared as it is)."""
    return (
        isinstance(outcome, dict)
        and "value" in outcome
        and (outcome["value"] is None or isinstance(outcome["value"], str))
    )


def _text(outcome: dict) -> str:
    v = outcome.get("value")
    if v is None:
        return "None"
    return repr(v if len(v) <= 40 else v[:37] + "...")


def _num(a: np.ndarray) -> str:
    if a.size == 1:
        x = float(a[0])
        return f"{x:.6g}" if math.isfinite(x) else str(x)
    shown = ", ".join(f"{float(x):.4g}" for x in a[:4])
    return f"[{shown}{', …' if a.size > 4 else ''}]"


def _pair(before: np.ndarray, after: np.ndarray) -> str:
    return f"yours {_num(before)} before, {_num(after)} after"


def line_text(meta: dict, hit: set[int], failed: int, shown: list[str]) -> str:
    """The feedback line of a broken relation."""
    n = len(hit)
    verb = {
        "same": "your result changes",
        "differs": "your result stays the same",
        "not-above": "your result rises",
    }.get(str(meta.get("relation")), "your result does not follow")
    where = f" ({'; '.join(shown[:2])})" if shown else ""
    return (
        f"{meta.get('says')}; {verb} when {meta.get('change')}, on {n} of the {failed} failed "
        f"check{'s' if failed > 1 else ''}{where}"
    )
