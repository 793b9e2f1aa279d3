"""Values <-> plain JSON.

Both grading engines turn every input and every outcome into this form and
compare only encoded values, so they give the same verdicts by construction.
In ``drills grade`` the untrusted child encodes its outputs and the parent
decodes nothing it did not validate.

Encoded forms::

    None, bool, int, str                 themselves
    float                                a JSON number, or {"$float": "nan"|"inf"|"-inf"}
    list, tuple                          a JSON list
    numpy array                          {"$array": [flat values], "shape": [...], "dtype": "float64"}
    torch tensor                         {"$tensor": [flat values], "shape": [...], "dtype": "float32"}
    dataclass instance / spec.Obj        {"$obj": "Turn", "fields": {name: value}}
    dict with str keys                   {"$dict": {key: value}}
    spec.Fn (an input function)          {"$fn": "k3", "source": "lambda logp, ref_logp: ..."}

An outcome is ``{"value": <encoded>}`` or ``{"raised": "ValueError", "message": "..."}``.
A gradient case (``grad`` given to :func:`outcome_of`, see spec's kinds) has the value
``{"$dict": {name: <the encoded gradient> | "no gradient" | "gradient"}}``: one entry per
input it differentiates, computed in the process that ran the function (the learner's
child, or the kernel), so only plain data crosses over.

Every outcome, in either engine, passes :func:`clean_outcome` once: a lone surrogate in
a string (``"\\ud800"``: not text any UTF-8 writer can take) becomes U+FFFD, and a value
holding an integer too large for a float (which no tolerance can compare, and whose
decimal text may exceed Python's 4,300-digit limit), or more than ``MAX_OUTCOME_ITEMS``
items (far more than any graded function returns), becomes an ``UnsupportedReturn``. In
`drills grade` the parent applies it again to what the child sent (it cannot trust the
child's copy of this module), so the CSV, JSON, HTML and cache writers only ever see
clean values.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

from autograder.cases.spec import Fn, Obj

MAX_DEPTH = 32
MAX_ITEMS = 1_000_000


class EncodeError(TypeError):
    """A value that has no plain-JSON form (the learner returned something odd)."""


LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # half of a UTF-16 pair: not text


def clean_text(s: str) -> str:
    """``s`` with each lone surrogate (half of a UTF-16 pair, which UTF-8 cannot encode)
    replaced by U+FFFD, so that every writer can take it; other text is returned as is."""
    return s if LONE_SURROGATE.search(s) is None else LONE_SURROGATE.sub("\ufffd", s)


class _TooBig(ValueError):
    pass


# No graded function returns more than 48 numbers and no input holds more than ~5,200: a
# value of more items cannot pass, and scoring, diagnosing and writing it (at every case)
# would cost the parent minutes and the report megabytes. It is not compared.
MAX_OUTCOME_ITEMS = 10_000


def _too_many() -> _TooBig:
    return _TooBig(
        f"a value of more than {MAX_OUTCOME_ITEMS:,} numbers or items (no graded function "
        "returns that many) is not compared"
    )


def _clean(j: Any, budget: list[int]) -> Any:
    """``j`` cleaned; ``budget[0]``: how many more items it may hold."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _too_many()
    t = type(j)
    if t is str:
        return clean_text(j)
    if t is int:
        try:
            float(j)
        except OverflowError:
            raise _TooBig(
                f"an integer of {j.bit_length()} bits is too large to compare with a number"
            ) from None
        return j
    if t is list:
        if len(j) > budget[0]:
            raise _too_many()
        return [_clean(v, budget) for v in j]
    if t is dict:
        return {clean_text(k) if type(k) is str else k: _clean(v, budget) for k, v in j.items()}
    return j


def clean_outcome(o: dict) -> dict:
    """An outcome every writer can take (see the module's docstring); ``o`` is not changed."""
    if "value" in o:
        try:
            return {"value": _clean(o["value"], [MAX_OUTCOME_ITEMS])}
        except _TooBig as e:
            return {"raised": "UnsupportedReturn", "message": str(e)}
    return {k: clean_text(v) if type(v) is str else v for k, v in o.items()}


def _float(x: float) -> Any:
    # float.hex reads the C double itself: a float subclass cannot lie through __float__.
    v = float.fromhex(float.hex(x))
    if math.isnan(v):
        return {"$float": "nan"}
    if math.isinf(v):
        return {"$float": "inf" if v > 0 else "-inf"}
    return v


def encode(x: Any, _depth: int = 0) -> Any:
    if _depth > MAX_DEPTH:
        raise EncodeError("value nested too deeply")
    t = type(x)
    if x is None or t is bool or t is str:
        return x
    if t is int:
        return int(x)
    if isinstance(x, float):
        return _float(x)
    if isinstance(x, bool):  # a bool subclass cannot exist, kept for clarity
        return bool(x)
    if isinstance(x, int):
        return int.__index__(x)
    mod = t.__module__ or ""
    if mod == "numpy" or mod.startswith("numpy."):
        return _encode_numpy(x)
    if mod == "torch" or mod.startswith("torch."):
        return _encode_torch(x)
    if t is list or t is tuple:
        if len(x) > MAX_ITEMS:
            raise EncodeError("sequence too long")
        return [encode(v, _depth + 1) for v in x]
    if t is dict:
        if not all(type(k) is str for k in x):
            raise EncodeError("dict keys must be str")
        return {"$dict": {k: encode(v, _depth + 1) for k, v in x.items()}}
    if t is Fn:
        return {"$fn": x.name, "source": x.source}
    if t is Obj:
        return {
            "$obj": x.type_name,
            "fields": {k: encode(v, _depth + 1) for k, v in x.fields.items()},
        }
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        fields = {f.name: encode(getattr(x, f.name), _depth + 1) for f in dataclasses.fields(x)}
        return {"$obj": t.__name__, "fields": fields}
    raise EncodeError(f"cannot encode a value of type {t.__name__}")


def _encode_numpy(x: Any) -> Any:
    import numpy as np

    if isinstance(x, np.ndarray):
        if x.size > MAX_ITEMS:
            raise EncodeError("array too large")
        if x.dtype.kind not in "biuf":
            raise EncodeError(f"array of dtype {x.dtype} is not numeric")
        flat = [_scalar(v) for v in x.ravel().tolist()]
        return {"$array": flat, "shape": list(x.shape), "dtype": str(x.dtype)}
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return _float(float(x))
    raise EncodeError(f"cannot encode a value of type numpy.{type(x).__name__}")


def _encode_torch(x: Any) -> Any:
    import torch

    if type(x) is not torch.Tensor and not isinstance(x, torch.nn.Parameter):
        raise EncodeError(f"cannot encode a value of type {type(x).__name__}")
    t = x.detach().to("cpu")
    if t.numel() > MAX_ITEMS:
        raise EncodeError("tensor too large")
    if t.is_complex():
        raise EncodeError("complex tensors are not supported")
    flat = [_scalar(v) for v in t.reshape(-1).tolist()]
    return {"$tensor": flat, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}


def _scalar(v: Any) -> Any:
    if type(v) is bool:
        return v
    if type(v) is int:
        return v
    return _float(v)


def decode(j: Any, namespace: dict | None = None) -> Any:
    """Build fresh Python values from an encoded form; ``$obj`` types come from ``namespace``."""
    if j is None or isinstance(j, (bool, int, str)):
        return j
    if isinstance(j, float):
        return j
    if isinstance(j, list):
        return [decode(v, namespace) for v in j]
    if isinstance(j, dict):
        if "$float" in j:
            return float(j["$float"])
        if "$array" in j:
            import numpy as np

            flat = [decode(v) for v in j["$array"]]
            return np.array(flat, dtype=j["dtype"]).reshape(j["shape"])
        if "$tensor" in j:
            import torch

            flat = [decode(v) for v in j["$tensor"]]
            dtype = getattr(torch, j["dtype"])
            return torch.tensor(flat, dtype=dtype).reshape(j["shape"])
        if "$dict" in j:
            return {k: decode(v, namespace) for k, v in j["$dict"].items()}
        if "$fn" in j:
            return _input_function(j["$fn"], j["source"])
        if "$obj" in j:
            fields = {k: decode(v, namespace) for k, v in j["fields"].items()}
            if namespace is None or j["$obj"] not in namespace:
                raise KeyError(f"type {j['$obj']} is not defined in this notebook")
            return namespace[j["$obj"]](**fields)
    raise ValueError(f"not an encoded value: {j!r:.80}")


def _input_function(name: str, source: str):
    import math

    import numpy as np

    env: dict = {"math": math, "np": np, "__builtins__": __builtins__}
    if "torch" in source:  # importing torch takes seconds: only for a function that uses it
        try:
            import torch

            env["torch"] = torch
        except ImportError:  # pragma: no cover
            pass
    fn = eval(source, env)  # noqa: S307 (source comes from the trusted case module)
    fn.__name__ = name
    return fn


# A served call's arguments match a recorded call's when their numbers agree to this (a caller
# that computes an argument in float32, or in another order, still gets the served value).
SERVED_RTOL = 1e-5
SERVED_ATOL = 1e-8


def _dtype_kind(dtype: Any) -> str:
    d = str(dtype)
    if d == "bool":
        return "bool"
    if "int" in d:
        return "int"
    return "float"


def _num(j: Any) -> float | None:
    if type(j) in (int, float):
        return float(j)
    if isinstance(j, dict) and set(j) == {"$float"}:
        return float(j["$float"])
    return None


def _close(a: Any, b: Any, skip_text: bool) -> bool:
    """Do two encoded values match for a served call (numbers within the served tolerance,
    arrays of the same kind, shape and numeric kind; text equal unless ``skip_text``)?"""
    if type(a) is str or type(b) is str:
        return (skip_text and type(a) is str and type(b) is str) or a == b
    if type(a) is bool or type(b) is bool or a is None or b is None:
        return type(a) is type(b) and a == b
    x, y = _num(a), _num(b)
    if x is not None or y is not None:
        if x is None or y is None:
            return False
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        if math.isinf(x) or math.isinf(y):
            return x == y
        return abs(x - y) <= SERVED_ATOL + SERVED_RTOL * abs(y)
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(_close(u, v, skip_text) for u, v in zip(a, b))
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return False
    for tag in ("$array", "$tensor"):
        if tag in a or tag in b:
            return (
                tag in a
                and tag in b
                and a.get("shape") == b.get("shape")
                and _dtype_kind(a.get("dtype")) == _dtype_kind(b.get("dtype"))
                and _close(a[tag], b[tag], skip_text)
            )
    if "$dict" in a and "$dict" in b:
        da, db = a["$dict"], b["$dict"]
        return da.keys() == db.keys() and all(_close(da[k], db[k], skip_text) for k in da)
    if "$obj" in a and "$obj" in b:
        fa, fb = a.get("fields", {}), b.get("fields", {})
        return (
            a["$obj"] == b["$obj"]
            and fa.keys() == fb.keys()
            and all(_close(fa[k], fb[k], skip_text) for k in fa)
        )
    return False


def _served_outcome(calls: list, key: list) -> dict | None:
    """The recorded outcome for a call with arguments ``key``: the same arguments, else
    arguments within the served tolerance; else, for a check (a recorded outcome that is None
    or an error), the same data with other text (a check's label is only its message), when
    every such call had the same outcome. None when no recorded call matches."""
    for k, outcome in calls:
        if k == key:
            return outcome
    for k, outcome in calls:
        if _close(k, key, False):
            return outcome
    if not any(type(v) is not str for v in key):
        return None
    found = [o for k, o in calls if _close(k, key, True)]
    if not found or not all(o.get("value", 0) is None or "raised" in o for o in found):
        return None
    first = found[0]
    if all(o.get("raised") == first.get("raised") for o in found):
        return first
    return None


def _served_function(name: str, table: dict, own: Any, namespace: dict):
    """A function that answers ``name``'s calls from ``table`` (see served_callees)."""
    import builtins
    import inspect

    params = []
    for pname, kind, has_default, default in table["params"]:
        extra = {"default": decode(default, namespace)} if has_default else {}
        params.append(inspect.Parameter(pname, getattr(inspect.Parameter, kind), **extra))
    sig = inspect.Signature(params)
    calls = table["calls"]

    def served(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            key = [encode(bound.arguments[p.name]) for p in params]
        except Exception:  # noqa: BLE001 (arguments the reference never takes: yours answers)
            key = None
        outcome = None if key is None else _served_outcome(calls, key)
        if outcome is None:
            if callable(own):
                return own(*args, **kwargs)
            raise NameError(f"name {name!r} is not defined")
        if "raised" in outcome:
            exc = getattr(builtins, str(outcome["raised"]), None)
            if not (isinstance(exc, type) and issubclass(exc, Exception)):
                exc = RuntimeError
            raise exc(f"{name} (the reference, served by the grader) rejects these arguments")
        return decode(outcome["value"], namespace)

    served.__name__ = served.__qualname__ = name
    served.__signature__ = sig
    return served


class served_callees:  # noqa: N801 (used as a context manager, like contextlib's)
    """One slip, one charge: while a graded function runs on a case, the other functions of the
    notebook it calls answer as the reference does, so that a slip in one of them costs points
    only where it was made.

    ``serve`` is what ``autograder.scoring.served`` puts in a case's inputs: ``{"functions":
    {name: {"params": [...], "calls": [[arguments, outcome], ...]}}}``, the reference callees'
    outcomes on the arguments the reference caller passes on this case (values only: no code of
    the reference), or None. Each named function of ``namespace`` is replaced, until exit, by
    one that answers from that table; a call with arguments the table does not hold runs the
    learner's own function (a NameError if there is none).
    """

    _MISSING = object()

    def __init__(self, namespace: dict, serve: Any) -> None:
        self.namespace, self.serve, self.saved = namespace, serve, {}

    def __enter__(self) -> None:
        if not isinstance(self.serve, dict) or not isinstance(self.serve.get("functions"), dict):
            return
        for name, table in self.serve["functions"].items():
            own = self.namespace.get(name, self._MISSING)
            self.saved[name] = own
            self.namespace[name] = _served_function(
                name, table, None if own is self._MISSING else own, self.namespace
            )

    def __exit__(self, *exc: Any) -> None:
        for name, old in self.saved.items():
            if old is self._MISSING:
                self.namespace.pop(name, None)
            else:
                self.namespace[name] = old
        self.saved = {}


def outcome_of(fn, args_json: Any, kwargs_json: Any, namespace: dict, grad: Any = None) -> dict:
    """Call ``fn`` on freshly decoded inputs and encode what happened; with ``grad`` (a
    gradient case: ``{"with": [[name, position], ...], "detached": [...]}``, a position being
    an argument's index or a keyword's name) the outcome is the gradient the result gives."""
    return clean_outcome(_outcome(fn, args_json, kwargs_json, namespace, grad))


# The seed of the fixed pseudo-random weights w of a gradient case on a non-scalar result
# (.backward() on Σ w·result): the same weights in every process and engine.
GRADIENT_SEED = 20260
NO_GRADIENT = "no gradient"  # a detached input that no gradient reached (.grad None or all 0)
GRADIENT = "gradient"  # a detached input that some gradient reached


# What a gradient outcome is computed with, taken while only trusted code has run: the child
# harness calls seal_autograd() after the notebook's setup cells and before the learner's, so a
# learner cell that rebinds torch.Tensor.backward, torch.autograd.grad, the Tensor.grad property,
# torch.randn or torch.Tensor's methods changes nothing here. The C-level objects (the autograd
# engine's run_backward, TensorBase's methods, the graph's node types) are immutable types: Python
# code cannot rebind them. In nbgrader's kernel, where the learner's code shares the process with
# the tests by design, they are taken at the first gradient case instead.
_SEALED: dict | None = None


def seal_autograd() -> None:
    """Take the autograd entry points the gradient outcomes use, if torch is loaded (idempotent)."""
    global _SEALED
    import sys

    if _SEALED is not None or "torch" not in sys.modules:
        return
    import torch

    tb = torch._C.TensorBase
    vf = torch._C._VariableFunctions
    _SEALED = {
        "Tensor": torch.Tensor,
        "run_backward": torch.autograd.variable.Variable._execution_engine.run_backward,
        "no_torch_function": torch._C.DisableTorchFunction,
        "function_modes": torch._C._len_torch_function_stack,
        "dispatch_modes": torch._C._len_torch_dispatch_stack,
        "FunctionBase": torch._C._FunctionBase,
        "Generator": torch.Generator,
        "float64": torch.float64,
        "randn": vf.randn,
        "ones_like": vf.ones_like,
        "zeros_like": vf.zeros_like,
        "requires_grad": tb.__dict__["requires_grad"].__get__,
        "grad_fn": tb.__dict__["grad_fn"].__get__,
        "hooks": tb.__dict__["_backward_hooks"].__get__,
        "shape": tb.__dict__["shape"].__get__,
        "dtype": tb.__dict__["dtype"].__get__,
        "is_floating_point": tb.is_floating_point,
        "numel": tb.numel,
        "detach": tb.detach,
        "clone": tb.clone,
        "requires_grad_": tb.requires_grad_,
        "reshape": tb.reshape,
        "to": tb.to,
        "mul": tb.mul,
        "add": tb.add,
        "sum": tb.sum,
        "ne": tb.ne,
        "any": tb.any,
        "tolist": tb.tolist,
    }


def _sealed() -> dict:
    seal_autograd()
    return _SEALED


def _grad_leaves(args: list, kwargs: dict, grad: dict) -> list[tuple[str, str, Any, Any]]:
    """Make each input a gradient case differentiates a leaf that requires grad, and pass the
    function a clone of it (as a model's output is not a leaf): [(name, role, leaf, clone)]."""
    t = _sealed()
    leaves = []
    for role in ("with", "detached"):
        for name, where in grad.get(role, []):
            holder, key = (args, where) if isinstance(where, int) else (kwargs, where)
            x = holder[key]
            if type(x) is not t["Tensor"] or not t["is_floating_point"](x):
                continue  # the reference raises on it, or it is not differentiable
            leaf = t["requires_grad_"](t["clone"](t["detach"](x)), True)
            holder[key] = passed = t["clone"](leaf)
            leaves.append((name, role, leaf, passed))
    return leaves


# a graph larger than this is not walked (no graded function builds one within a few hundred)
MAX_GRAPH_NODES = 100_000


def _reaches(root: Any, leaf: Any, t: dict) -> bool | None:
    """Does the autograd graph of ``root`` reach ``leaf`` (an input it was told to detach)?
    Read through the graph nodes' own C types (a node type Python code defined, a custom
    autograd.Function's, is read through its C base), so a hook that zeroes the gradient on the
    way, or a backward that returns zeros, does not hide an input the result depends on. None:
    the graph is too large to walk."""
    fb = t["FunctionBase"]
    start = t["grad_fn"](root)
    stack, seen = [start], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if len(seen) > MAX_GRAPH_NODES:
            return None
        kind = fb if isinstance(node, fb) else type(node)
        variable = getattr(kind, "variable", None)
        if variable is not None and hasattr(variable, "__get__") and variable.__get__(node) is leaf:
            return True
        stack.extend(pair[0] for pair in kind.next_functions.__get__(node))
    return False


def _encode_sealed(x: Any, t: dict) -> Any:
    """A tensor's encoded form through the sealed methods (as :func:`_encode_torch`)."""
    flat = t["tolist"](t["reshape"](t["to"](t["detach"](x), "cpu"), (-1,)))
    return {
        "$tensor": [_scalar(v) for v in flat],
        "shape": list(t["shape"](x)),
        "dtype": str(t["dtype"](x)).replace("torch.", ""),
    }


# The grader's own words when it refuses to differentiate (feedback may quote them: no
# learner wrote them, and a learner's exception of that name carries other words)
TAMPERED_MODE = "a torch function or dispatch mode was left active: gradients are graded with none"
TAMPERED_HOOK = (
    "a backward hook was registered on an input or on the result: the gradient is graded as "
    "the function computes it, without hooks"
)


def _gradient_of(value: Any, leaves: list[tuple[str, str, Any, Any]]) -> dict:
    """The gradient outcome: the gradient of the result (or of Σ w·result) into each leaf,
    computed by the autograd engine directly (no ``.backward()``, no ``.grad`` read), with
    every torch-function override off; a detached input counts as receiving gradient when
    any reaches it or when the result's graph reaches it at all."""
    t = _sealed()
    if type(value) is not t["Tensor"] or not t["is_floating_point"](value):
        return {
            "raised": "NoGradient",
            "message": "the result is not a floating torch tensor: no gradient can flow through it",
        }
    if t["function_modes"]() or t["dispatch_modes"]():
        return {"raised": "TamperedAutograd", "message": TAMPERED_MODE}
    if any(t["hooks"](x) for x in [value, *(passed for *_, passed in leaves)]):
        return {"raised": "TamperedAutograd", "message": TAMPERED_HOOK}
    with t["no_torch_function"]():
        n = t["numel"](value)
        if n != 1:
            g = t["Generator"]()
            g.manual_seed(GRADIENT_SEED)
            w = t["reshape"](t["randn"](n, generator=g, dtype=t["float64"]), t["shape"](value))
            out = t["sum"](t["mul"](t["to"](value, t["float64"]), w))
        else:
            out = t["reshape"](value, ())
        inputs = tuple(leaf for _, _, leaf, _ in leaves)
        if t["requires_grad"](out) and inputs:
            grads = t["run_backward"](
                (out,), (t["ones_like"](out),), False, False, inputs, True, False
            )
        else:
            grads = (None,) * len(inputs)
        result = {}
        for (name, role, leaf, _), gr in zip(leaves, grads):
            if role == "with":
                # + 0.0: a zero of either sign is 0 (a sign of zero is not a gradient difference)
                g0 = t["zeros_like"](leaf) if gr is None else t["add"](t["detach"](gr), 0.0)
                result[name] = _encode_sealed(g0, t)
            else:
                flows = gr is not None and bool(t["any"](t["ne"](gr, 0)))
                if not flows and t["requires_grad"](out):
                    flows = _reaches(out, leaf, t) is not False
                result[name] = GRADIENT if flows else NO_GRADIENT
    return {"value": {"$dict": result}}


def _outcome(fn, args_json: Any, kwargs_json: Any, namespace: dict, grad: Any = None) -> dict:
    args = decode(args_json, namespace)
    kwargs = decode(kwargs_json, namespace)
    try:
        if grad:
            import torch

            # grad mode on whatever an earlier cell set (in the kernel, the reference runs in
            # the learner's process): both engines differentiate the same way
            with torch.enable_grad():
                leaves = _grad_leaves(args, kwargs, grad)
                return _gradient_of(fn(*args, **kwargs), leaves)
        value = fn(*args, **kwargs)
    except NotImplementedError as e:
        return {"raised": "NotImplementedError", "message": _msg(e)}
    except ValueError as e:
        return {"raised": "ValueError", "message": _msg(e)}
    except Exception as e:  # noqa: BLE001 (the learner's error is the outcome)
        return {"raised": type(e).__name__, "message": _msg(e)}
    try:
        return {"value": encode(value)}
    except EncodeError as e:
        return {"raised": "UnsupportedReturn", "message": str(e)}
    except Exception as e:  # noqa: BLE001 (e.g. a __getattr__ that raises)
        return {"raised": "UnsupportedReturn", "message": f"{type(e).__name__}: {_msg(e)}"}


def _msg(e: BaseException) -> str:
    try:
        return str(e)[:500]
    except Exception:  # noqa: BLE001
        return "<unprintable message>"
