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


def render(j: Any, limit: int = 400) -> str:
    """A short human-readable form of an encoded value for feedback."""
    n = numeric(j)
    if n is not None:
        shape, vals = n
        txt = ", ".join(f"{v:.6g}" for v in vals[:8]) + (", …" if len(vals) > 8 else "")
        out = txt if shape == () else f"[{txt}] (shape {tuple(shape)})"
    elif isinstance(j, dict) and "$obj" in j:
        out = (
            j["$obj"]
            + "("
            + ", ".join(f"{k}={render(v, 80)}" for k, v in j["fields"].items())
            + ")"
        )
    elif isinstance(j, list):
        out = "[" + ", ".join(render(v, 60) for v in j) + "]"
    else:
        out = repr(j)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def render_outcome(o: dict) -> str:
    if "raised" in o:
        msg = o.get("message") or ""
        return f"raised {o['raised']}" + (f": {msg[:120]}" if msg else "")
    return render(o.get("value"))
