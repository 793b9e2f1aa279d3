"""Tolerance comparison of encoded values (see codec)."""

from __future__ import annotations

import math
from typing import Any

Numeric = tuple[tuple[int, ...], list[float]]


def _number(j: Any) -> float | None:
    if isinstance(j, bool):
        return None
    if isinstance(j, (int, float)):
        return float(j)
    if isinstance(j, dict) and set(j) == {"$float"} and j["$float"] in ("nan", "inf", "-inf"):
        return float(j["$float"])
    return None


def numeric(j: Any) -> Numeric | None:
    """(shape, flat values) for a number, a (nested) list of numbers, an array or a tensor."""
    n = _number(j)
    if n is not None:
        return (), [n]
    if isinstance(j, dict) and ("$array" in j or "$tensor" in j):
        flat = j.get("$array", j.get("$tensor"))
        vals = [_number(v) for v in flat]
        if any(v is None for v in vals):
            return None
        return tuple(j["shape"]), vals  # type: ignore[return-value]
    if isinstance(j, list):
        parts = [numeric(v) for v in j]
        if any(p is None for p in parts):
            return None
        shapes = {p[0] for p in parts}  # type: ignore[index]
        if len(shapes) > 1:
            return None
        inner = shapes.pop() if shapes else ()
        return (len(j), *inner), [v for p in parts for v in p[1]]  # type: ignore[index]
    return None


def close_number(expected: float, got: float, rtol: float, atol: float) -> bool:
    if math.isnan(expected) or math.isnan(got):
        return math.isnan(expected) and math.isnan(got)
    if math.isinf(expected) or math.isinf(got):
        return expected == got
    return abs(got - expected) <= atol + rtol * abs(expected)


def close(expected: Any, got: Any, rtol: float, atol: float) -> bool:
    """Is the encoded ``got`` equal to the encoded ``expected`` within tolerance?

    Containers are compared by shape and values, not by type: a list where a
    tuple was expected, or a 0-d tensor where a float was expected, passes.
    """
    ne = numeric(expected)
    if ne is not None:
        ng = numeric(got)
        if ng is None or ng[0] != ne[0]:
            # a number vs a one-element container of it is still a shape mismatch
            return False
        return all(close_number(e, g, rtol, atol) for e, g in zip(ne[1], ng[1]))
    if expected is None or isinstance(expected, (bool, str)):
        return type(got) is type(expected) and got == expected
    if isinstance(expected, list):
        return (
            isinstance(got, list)
            and len(got) == len(expected)
            and all(close(e, g, rtol, atol) for e, g in zip(expected, got))
        )
    if isinstance(expected, dict) and "$obj" in expected:
        if not (isinstance(got, dict) and "$obj" in got and isinstance(got.get("fields"), dict)):
            return False
        ef, gf = expected["fields"], got["fields"]
        return set(ef) == set(gf) and all(close(ef[k], gf[k], rtol, atol) for k in ef)
    if isinstance(expected, dict) and "$dict" in expected:
        if not (isinstance(got, dict) and isinstance(got.get("$dict"), dict)):
            return False
        ed, gd = expected["$dict"], got["$dict"]
        return set(ed) == set(gd) and all(close(ed[k], gd[k], rtol, atol) for k in ed)
    return False


def same_outcome(expected: dict, got: dict, rtol: float, atol: float) -> bool:
    """Does an outcome match the reference's? Raising: same category; values: close."""
    if "raised" in expected:
        return got.get("raised") == expected["raised"]
    if "value" not in got:
        return False
    return close(expected["value"], got["value"], rtol, atol)


def render(j: Any, limit: int = 400, digits: int = 6, start: int = 0) -> str:
    """A short human-readable form of an encoded value for feedback: numbers to ``digits``
    significant digits; of a long array, 8 values from flat index ``start`` on."""
    n = numeric(j)
    if n is not None:
        shape, vals = n
        start = max(0, min(start, len(vals) - 8))
        shown = vals[start : start + 8]
        txt = ", ".join(number_text(v, digits) for v in shown)
        txt = ("…, " if start else "") + txt + (", …" if start + 8 < len(vals) else "")
        out = txt if shape == () else f"[{txt}] (shape {tuple(shape)})"
    elif isinstance(j, dict) and ("$array" in j or "$tensor" in j):
        # an array of bools (a mask) or of other items: its items as Python writes them
        flat = j.get("$array", j.get("$tensor"))
        flat = flat if isinstance(flat, list) else []
        shown = ", ".join(render(v, 20, digits) for v in flat[:8])
        shown += ", …" if len(flat) > 8 else ""
        shape = tuple(j.get("shape") or ())
        dtype = j.get("dtype")
        out = f"[{shown}] (shape {shape}" + (f", {dtype}" if dtype else "") + ")"
    elif isinstance(j, dict) and "$dict" in j and isinstance(j["$dict"], dict):
        out = (
            "{" + ", ".join(f"{k!r}: {render(v, 60, digits)}" for k, v in j["$dict"].items()) + "}"
        )
    elif isinstance(j, dict) and "$fn" in j:
        out = str(j.get("source") or j["$fn"])
    elif isinstance(j, dict) and "$obj" in j:
        out = (
            j["$obj"]
            + "("
            + ", ".join(f"{k}={render(v, 80, digits)}" for k, v in j["fields"].items())
            + ")"
        )
    elif isinstance(j, dict) and isinstance(j.get("$dict"), dict):
        # a dict, e.g. a gradient case's outcome: "d/d logp = [...]; logp_old: no gradient"
        out = "; ".join(f"{k}: {render(v, 160, digits, start)}" for k, v in j["$dict"].items())
    elif isinstance(j, list):
        out = "[" + ", ".join(render(v, 60, digits) for v in j) + "]"
    else:
        out = repr(j)
    return cut(out, limit)


def number_text(v: float, digits: int = 6) -> str:
    """``v`` to ``digits`` significant digits, never "-0" (a negative zero prints as 0)."""
    return f"{v + 0.0:.{digits}g}"


def cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters: cut at the last space before the limit (at
    the limit when a single word is longer than half of it), with "…" where it was cut."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space >= limit // 2:
        head = head[:space].rstrip(" ,;:")
    return head + "…"


def _numbers_in(j: Any) -> list[float]:
    """Every number of an encoded value, in order (fields of an object, items of a dict)."""
    n = numeric(j)
    if n is not None:
        return n[1]
    if isinstance(j, dict) and "$obj" in j:
        return [x for v in j["fields"].values() for x in _numbers_in(v)]
    if isinstance(j, dict) and "$dict" in j:
        return [x for v in j["$dict"].values() for x in _numbers_in(v)]
    if isinstance(j, list):
        return [x for v in j for x in _numbers_in(v)]
    return []


def _differs(a: float, b: float) -> bool:
    return not (a == b or (math.isnan(a) and math.isnan(b)))


def render_pair(expected: dict, got: dict) -> tuple[str, str, str]:
    """An expected and a computed outcome rendered so that they never print the same when they
    differ: as many digits as it takes (up to 17), a long array shown from its first difference,
    and a note with the largest absolute and relative difference ("" when there is none)."""
    if "raised" in expected or "raised" in got or "value" not in got:
        return render_outcome(expected), render_outcome(got), ""
    e, g, where = _focus(expected.get("value"), got["value"])
    ne, ng = numeric(e), numeric(g)
    start = 0
    if ne is not None and ng is not None and ne[0] == ng[0]:
        diffs = [i for i, (a, b) in enumerate(zip(ne[1], ng[1])) if _differs(a, b)]
        start = diffs[0] if diffs and diffs[0] >= 8 else 0
    for digits in (6, 8, 10, 12, 14, 17):
        te, tg = render(e, digits=digits, start=start), render(g, digits=digits, start=start)
        if te != tg:
            break
    note = ""
    a, b = _numbers_in(e), _numbers_in(g)
    if te == tg:
        note = "the values print the same but differ in type or structure"
    elif a and len(a) == len(b):
        pairs = [(x, y) for x, y in zip(a, b) if _differs(x, y)]
        finite = [(x, y) for x, y in pairs if math.isfinite(x) and math.isfinite(y)]
        if finite and len(finite) == len(pairs):
            # the relative figure is the one at the element of the largest difference, never
            # one taken from another element (where the expected value is 0 there is none)
            x, y = max(finite, key=lambda p: abs(p[1] - p[0]))
            worst = abs(y - x)
            note = f"largest difference {worst:.2g}" + (
                f" (relative {worst / abs(x):.2g})" if x else " (where 0 was expected)"
            )
        if start:
            note = (
                note + "; " if note else ""
            ) + f"shown from the first difference, at flat index {start}"
    if where:
        note = where + (f": {note}" if note else "")
    return te, tg, note


def _focus(e: Any, g: Any, where: str = "") -> tuple[Any, Any, str]:
    """The parts of two encoded values where they first differ: an item of two lists of the
    same length that are not plain numbers, the differing fields of two objects of one type."""
    if numeric(e) is None and isinstance(e, list) and isinstance(g, list) and len(e) == len(g):
        diff = [k for k, (a, b) in enumerate(zip(e, g)) if a != b]
        if diff:
            k = diff[0]
            more = f" (and {len(diff) - 1} more)" if len(diff) > 1 else ""
            return _focus(e[k], g[k], f"{where}item {k}{more}, ")
    if (
        isinstance(e, dict)
        and isinstance(g, dict)
        and "$obj" in e
        and e.get("$obj") == g.get("$obj")
        and isinstance(g.get("fields"), dict)
        and set(e["fields"]) == set(g["fields"])
    ):
        keys = [k for k in e["fields"] if e["fields"][k] != g["fields"][k]]
        if keys and len(keys) < len(e["fields"]):

            def pick(o: dict) -> dict:
                return {"$obj": o["$obj"], "fields": {k: o["fields"][k] for k in keys}}

            return pick(e), pick(g), f"{where}fields that differ"
    if (
        isinstance(e, dict)
        and isinstance(g, dict)
        and isinstance(e.get("$dict"), dict)
        and isinstance(g.get("$dict"), dict)
        and set(e["$dict"]) == set(g["$dict"])
    ):  # a gradient case's outcome: the first input whose gradient differs
        keys = [k for k in e["$dict"] if e["$dict"][k] != g["$dict"][k]]
        if keys:
            more = f" (and {len(keys) - 1} more)" if len(keys) > 1 else ""
            return _focus(e["$dict"][keys[0]], g["$dict"][keys[0]], f"{where}{keys[0]}{more}, ")
    return e, g, where.rstrip(", ")


def render_outcome(o: dict) -> str:
    if "raised" in o:
        msg = o.get("message") or ""
        return f"raised {o['raised']}" + (f": {cut(msg, 120)}" if msg else "")
    return render(o.get("value"))
