"""An opt-in disk cache of the probe's per-seed results, shared by processes on one machine.

Off unless ``TINY_MODEL_PROBE_CACHE`` names a folder. The test suite sets it (tests/conftest.py)
so that the pooled probes the solution notebooks run in their kernels (05: SGD and Adam with
grpo and pos_only; 06: Adam with grpo, nthr and random) are not computed again by
tests/test_tiny_model_probe.py in another process; they are the same computation.

A result is reused only when everything it depends on is the same: the model's weights (every
tensor of its state dict, byte for byte), the probe's settings (``ProbeConfig``, the seed and
the task included), the torch version and the CPU kernels torch picked (``ATEN_CPU_CAPABILITY``
and the other switches named in ``KERNEL_ENV``), and the code of every function of the seam
(``Functions``): its bytecode, constants and names, its defaults and closure, and, recursively,
every global it loads (functions by their code, modules by name, numbers and strings by value).
A function whose globals hold anything else (a tensor, an object) makes the result uncached, so
a learner's function is reused only where it is the same code, never merely the same name.

The folder must be one you own: results are stored with ``torch.save`` and read back with
``torch.load(weights_only=False)``, which unpickles. The grader never sets the variable, and its
sandboxed children get a clean environment.
"""

from __future__ import annotations

import builtins
import dataclasses
import dis
import hashlib
import json
import os
import sys
import tempfile
import types
from pathlib import Path

import torch

ENV = "TINY_MODEL_PROBE_CACHE"
KERNEL_ENV = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "DNNL_MAX_CPU_ISA")
_SIMPLE = (int, float, complex, str, bytes, bool, type(None))
# `from __future__ import annotations` changes how annotations are stored, not what a function
# computes; the course's reference code is compiled with it, a notebook's cells without.
_CO_FUTURE_ANNOTATIONS = 0x1000000


class _Uncacheable(Exception):
    """A value the key cannot describe: the result is computed, not cached."""


def folder() -> Path | None:
    """The cache folder, or None when caching is off."""
    where = os.environ.get(ENV)
    return Path(where) if where else None


def _value(v: object, seen: set[int]) -> str:
    if isinstance(v, _SIMPLE):
        return f"{type(v).__name__}:{v!r}"
    if isinstance(v, tuple):
        return "(" + ",".join(_value(x, seen) for x in v) + ")"
    if isinstance(v, frozenset):
        return "{" + ",".join(sorted(_value(x, seen) for x in v)) + "}"
    if isinstance(v, types.ModuleType):
        return f"module:{v.__name__}"
    if isinstance(v, types.FunctionType):
        return function_digest(v, seen)
    named = _importable_name(v)
    if named is not None:  # a class, builtin or ufunc that an import gives back as it is
        return f"named:{named}"
    raise _Uncacheable(type(v).__name__)


def _importable_name(v: object) -> str | None:
    module, name = getattr(v, "__module__", None), getattr(v, "__qualname__", None)
    name = name or getattr(v, "__name__", None)
    if not module or not name or module == "__main__" or module not in sys.modules:
        return None
    found = sys.modules[module]
    for part in name.split("."):
        found = getattr(found, part, None)
    return f"{module}.{name}" if found is v else None


def _code(co: types.CodeType, seen: set[int]) -> tuple[str, set[str]]:
    """A digest of a code object (line numbers and file name left out) and the globals it loads."""
    h = hashlib.sha256()
    for part in (co.co_name, co.co_code, co.co_names, co.co_varnames, co.co_freevars,
                 co.co_cellvars, co.co_argcount, co.co_posonlyargcount, co.co_kwonlyargcount,
                 co.co_flags & ~_CO_FUTURE_ANNOTATIONS):  # fmt: skip
        h.update(repr(part).encode())
    loaded = {
        ins.argval for ins in dis.get_instructions(co) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")
    }
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            digest, inner = _code(c, seen)
            h.update(digest.encode())
            loaded |= inner
        else:
            h.update(_value(c, seen).encode())
    return h.hexdigest(), loaded


def function_digest(fn: types.FunctionType, seen: set[int] | None = None) -> str:
    """What ``fn`` computes, as far as its code and what it loads can tell (see the module)."""
    seen = set() if seen is None else seen
    if id(fn) in seen:
        return f"recursive:{fn.__qualname__}"
    seen.add(id(fn))
    digest, loaded = _code(fn.__code__, seen)
    h = hashlib.sha256(digest.encode())
    h.update(_value(fn.__defaults__, seen).encode())
    h.update(_value(tuple(sorted((fn.__kwdefaults__ or {}).items())), seen).encode())
    for cell in fn.__closure__ or ():
        h.update(_value(cell.cell_contents, seen).encode())
    for name in sorted(loaded):
        if name in fn.__globals__:
            h.update(f"{name}={_value(fn.__globals__[name], seen)}".encode())
        elif hasattr(builtins, name):
            h.update(f"{name}=builtin".encode())
        else:
            h.update(f"{name}=missing".encode())
    return h.hexdigest()


def key(model: torch.nn.Module, fns: object, config: object) -> str | None:
    """The cache key of one seed's probe (``config`` a ProbeConfig), or None: do not cache."""
    h = hashlib.sha256()
    try:
        for f in dataclasses.fields(fns):
            fn = getattr(fns, f.name)
            if fn is None:
                h.update(f"{f.name}=None".encode())
            elif isinstance(fn, types.FunctionType):
                h.update(f"{f.name}={function_digest(fn)}".encode())
            else:
                return None
    except _Uncacheable:
        return None
    settings = json.dumps(dataclasses.asdict(config), sort_keys=True, default=repr)
    kernels = {name: os.environ.get(name) for name in KERNEL_ENV}
    h.update(json.dumps([settings, torch.__version__, torch.backends.cpu.get_cpu_capability(),
                         torch.backends.mkldnn.is_available(), kernels,
                         type(model).__qualname__]).encode())  # fmt: skip
    for name, t in sorted(model.state_dict().items()):
        t = t.detach().cpu().contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}:{t.device}".encode())
        h.update(t.numpy().tobytes() if t.dtype != torch.bfloat16 else t.float().numpy().tobytes())
    return h.hexdigest()


def load(k: str | None) -> object | None:
    """The result stored under ``k``, or None (caching off, nothing stored, unreadable)."""
    where = folder()
    if where is None or k is None:
        return None
    path = where / f"{k}.pt"
    try:
        return torch.load(path, weights_only=False)
    except (OSError, EOFError, RuntimeError, ValueError):
        return None


def store(k: str | None, result: object) -> None:
    """Write ``result`` under ``k`` (whole or not at all: a temporary file, then a rename)."""
    where = folder()
    if where is None or k is None:
        return
    where.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=where, prefix=".probe-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(result, f)
        os.replace(tmp, where / f"{k}.pt")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
