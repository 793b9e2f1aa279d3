"""What a sandboxed child may write on the grader's channel, checked record by record.

The child runs learner code, so every line it writes is untrusted: :func:`parse_line` takes
exactly one JSON object (no NaN literal, no duplicated key, bounded nesting), and
:func:`validate_outcome` / :func:`validate_value` accept exactly the forms the trusted codec
writes (``autograder/cases/codec.py``), within the codec's size limits. Anything else is a
:class:`ProtocolError`, which the sandbox turns into that case's "InvalidOutput". Used by every
isolation mode alike (bubblewrap, reduced, warm and cold).
"""

from __future__ import annotations

import json
import math

from autograder.cases import codec

# Outcome names the grader itself gives (a learner's exception may not take them)
TIMEOUT, CRASH, NOT_RUN, INVALID = "Timeout", "Crash", "NotRun", "InvalidOutput"


class ProtocolError(ValueError):
    """A record that is not exactly what the harness writes."""


_DTYPES = {
    "float64",
    "float32",
    "float16",
    "bfloat16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
}
_MAX_STR = 100_000
_MAX_ITEMS = codec.MAX_ITEMS


def _reject(*_a):
    raise ProtocolError("NaN or Infinity literal")


def _pairs(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ProtocolError(f"duplicated key {k!r}")
        d[k] = v
    return d


def parse_line(line: bytes) -> dict:
    try:
        obj = json.loads(line.decode("utf-8"), object_pairs_hook=_pairs, parse_constant=_reject)
    except ProtocolError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ProtocolError(f"not a JSON record ({type(e).__name__})") from None
    if not isinstance(obj, dict):
        raise ProtocolError("a record must be a JSON object")
    return obj


class _Budget:
    def __init__(self) -> None:
        self.items = 0

    def take(self, n: int = 1) -> None:
        self.items += n
        if self.items > _MAX_ITEMS:
            raise ProtocolError("value too large")


def _number(v) -> bool:
    if type(v) is bool:
        return True
    if type(v) is int:
        return True
    if type(v) is float:
        return math.isfinite(v)
    return type(v) is dict and set(v) == {"$float"} and v["$float"] in ("nan", "inf", "-inf")


def validate_value(j, depth: int = 0, budget: _Budget | None = None) -> None:
    """Raise ProtocolError unless ``j`` is exactly one of codec's encoded forms."""
    budget = budget or _Budget()
    budget.take()
    if depth > codec.MAX_DEPTH + 1:
        raise ProtocolError("value nested too deeply")
    t = type(j)
    if j is None or t is bool or t is int:
        return
    if t is float:
        if not math.isfinite(j):
            raise ProtocolError("non-finite float outside {'$float': ...}")
        return
    if t is str:
        if len(j) > _MAX_STR:
            raise ProtocolError("string too long")
        return
    if t is list:
        budget.take(len(j))
        for v in j:
            validate_value(v, depth + 1, budget)
        return
    if t is not dict:
        raise ProtocolError(f"unexpected JSON type {t.__name__}")
    keys = set(j)
    if keys == {"$float"}:
        if j["$float"] not in ("nan", "inf", "-inf"):
            raise ProtocolError("bad $float")
        return
    if keys in ({"$array", "shape", "dtype"}, {"$tensor", "shape", "dtype"}):
        flat = j.get("$array", j.get("$tensor"))
        shape, dtype = j["shape"], j["dtype"]
        if type(flat) is not list or type(shape) is not list or type(dtype) is not str:
            raise ProtocolError("bad array")
        if dtype not in _DTYPES:
            raise ProtocolError(f"unsupported dtype {dtype[:20]!r}")
        if len(shape) > 32 or not all(type(s) is int and 0 <= s <= _MAX_ITEMS for s in shape):
            raise ProtocolError("bad shape")
        if math.prod(shape) != len(flat):
            raise ProtocolError("shape does not match the number of values")
        budget.take(len(flat))
        if not all(_number(v) for v in flat):
            raise ProtocolError("array values must be numbers")
        return
    if keys == {"$dict"} and type(j["$dict"]) is dict:
        budget.take(len(j["$dict"]))
        for k, v in j["$dict"].items():
            if len(k) > 1000:
                raise ProtocolError("dict key too long")
            validate_value(v, depth + 1, budget)
        return
    if keys == {"$obj", "fields"} and type(j["$obj"]) is str and type(j["fields"]) is dict:
        if len(j["$obj"]) > 200:
            raise ProtocolError("type name too long")
        budget.take(len(j["fields"]))
        for k, v in j["fields"].items():
            if len(k) > 200:
                raise ProtocolError("field name too long")
            validate_value(v, depth + 1, budget)
        return
    raise ProtocolError("not an encoded value")


def validate_outcome(o) -> dict:
    if type(o) is not dict:
        raise ProtocolError("an outcome must be an object")
    if set(o) == {"value"}:
        validate_value(o["value"])
        return o
    if set(o) == {"raised", "message"} and type(o["raised"]) is str and type(o["message"]) is str:
        if not (0 < len(o["raised"]) <= 100) or len(o["message"]) > 1000:
            raise ProtocolError("bad error outcome")
        if o["raised"] in (CRASH, NOT_RUN, INVALID):
            raise ProtocolError("reserved outcome name")
        return o
    raise ProtocolError("an outcome is {'value': ...} or {'raised': ..., 'message': ...}")


def _expect(rec: dict, keys: set[str]) -> None:
    if set(rec) != keys:
        raise ProtocolError(f"unexpected fields in a {rec.get('t')!r} record")
