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
every global it loads (functions by their code, modules by name, numbers and strings by value);
and tiny_model's own source (``source_digest``: a probe computed by another version of the
probe, whose numbers may differ in the last float32 bits, is not handed to this one).
A function whose globals hold anything else (a tensor, an object) makes the result uncached, so
a learner's function is reused only where it is the same code, never merely the same name.

What is stored is data only: a result is encoded as dicts, lists, numbers, text and tensors
(numpy arrays as tensors; the course's own dataclasses by name and fields), saved with
``torch.save`` and read back with ``torch.load(weights_only=True)``, which builds no object
but those; only a dataclass of ``tiny_model`` is rebuilt, from its fields. A file that does not
read back (garbage, truncated, a pickle of anything else) is ignored and the probe computed
again. The folder is used only when it is this user's and no one else can write it, and an
entry only when it is a regular file of this user (not a link): another user who could plant an
entry could otherwise hand a notebook a forged probe (with ``weights_only=False`` it ran a
command). The grader never sets the variable, and its sandboxed children get a clean
environment.
"""

from __future__ import annotations

import builtins
import dataclasses
import dis
import hashlib
import importlib
import io
import json
import os
import stat
import sys
import tempfile
import types
from pathlib import Path

import numpy as np
import torch

ENV = "TINY_MODEL_PROBE_CACHE"
KERNEL_ENV = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "DNNL_MAX_CPU_ISA")
_SIMPLE = (int, float, complex, str, bytes, bool, type(None))
# `from __future__ import annotations` changes how annotations are stored, not what a function
# computes; the course's reference code is compiled with it, a notebook's cells without.
_CO_FUTURE_ANNOTATIONS = 0x1000000


MAX_ENTRY_BYTES = 512 * 1024 * 1024  # a probe result is a few MB; larger is not ours


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


_SOURCE_DIGEST: list[str] = []


def source_digest() -> str:
    """sha256 of tiny_model's Python source files, names and bytes (read once per process)."""
    if not _SOURCE_DIGEST:
        h = hashlib.sha256()
        for path in sorted(Path(__file__).parent.glob("*.py")):
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        _SOURCE_DIGEST.append(h.hexdigest())
    return _SOURCE_DIGEST[0]


def key(model: torch.nn.Module, fns: object, config: object) -> str | None:
    """The cache key of one seed's probe (``config`` a ProbeConfig), or None: do not cache."""
    h = hashlib.sha256(source_digest().encode())
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


def refusal(where: Path) -> str | None:
    """Why the folder ``where`` must not hold the cache (None: it may): not a folder of this
    user, or writable by other users."""
    try:
        st = os.stat(where)
    except FileNotFoundError:
        return None  # created private by the first store
    except OSError as e:
        return f"{where} cannot be read ({e.strerror or e})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{where} is not a folder"
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return f"{where} belongs to another user"
    if st.st_mode & 0o022:
        return f"{where} can be written by other users (mode {stat.S_IMODE(st.st_mode):o})"
    return None


_WARNED: set[str] = set()


def _usable(where: Path) -> bool:
    why = refusal(where)
    if why is not None and why not in _WARNED:
        _WARNED.add(why)
        print(f"note: the probe cache {ENV} is not used: {why}", file=sys.stderr)
    return why is None


# -- a data-only form of a result ----------------------------------------------------------------


def _encode(v: object) -> object:
    """``v`` as plain dicts, lists, scalars, text and tensors (what weights_only loads);
    _Uncacheable when it holds anything else."""
    if v is None or type(v) in (bool, int, float, str):
        return v
    if isinstance(v, torch.Tensor):
        return {"$tensor": v.detach().cpu().clone()}
    if isinstance(v, np.ndarray | np.generic):
        a = np.asarray(v)
        if a.dtype.hasobject:
            raise _Uncacheable("numpy object array")
        try:
            t = torch.from_numpy(np.ascontiguousarray(a).copy())
        except TypeError as e:
            raise _Uncacheable(str(e)) from None
        return {"$numpy": t, "scalar": isinstance(v, np.generic), "dtype": a.dtype.str}
    if type(v) is tuple:
        return {"$tuple": [_encode(x) for x in v]}
    if type(v) is list:
        return [_encode(x) for x in v]
    if type(v) is dict and all(type(k) is str for k in v):
        return {"$dict": {k: _encode(x) for k, x in v.items()}}
    cls = type(v)
    if dataclasses.is_dataclass(v) and cls.__module__.startswith("tiny_model."):
        return {
            "$dataclass": f"{cls.__module__}:{cls.__qualname__}",
            "fields": {f.name: _encode(getattr(v, f.name)) for f in dataclasses.fields(v)},
        }
    raise _Uncacheable(cls.__name__)


def _decode(j: object) -> object:
    if type(j) is list:
        return [_decode(x) for x in j]
    if type(j) is not dict:
        if j is None or type(j) in (bool, int, float, str):
            return j
        raise ValueError(f"not a stored value: {type(j).__name__}")
    if "$tensor" in j:
        t = j["$tensor"]
        if not isinstance(t, torch.Tensor):
            raise ValueError("not a tensor")
        return t
    if "$numpy" in j:
        a = j["$numpy"].numpy()
        if a.dtype.str != j["dtype"]:
            raise ValueError("a numpy array of another dtype")
        return a[()] if j["scalar"] else a
    if "$tuple" in j:
        return tuple(_decode(x) for x in j["$tuple"])
    if "$dict" in j:
        return {str(k): _decode(x) for k, x in j["$dict"].items()}
    if "$dataclass" in j:
        module, _, name = str(j["$dataclass"]).partition(":")
        if not module.startswith("tiny_model."):
            raise ValueError(f"{module} is not the course's")
        cls: object = importlib.import_module(module)
        for part in name.split("."):
            cls = getattr(cls, part)
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise ValueError(f"{name} is not a dataclass")
        values = {k: _decode(x) for k, x in j["fields"].items()}
        fields = {f.name: f for f in dataclasses.fields(cls)}
        if set(values) != set(fields):
            raise ValueError(f"{name}: other fields than the class has")
        obj = cls(**{k: x for k, x in values.items() if fields[k].init})
        for k, x in values.items():
            if not fields[k].init:
                object.__setattr__(obj, k, x)
        return obj
    raise ValueError("not a stored value")


def load(k: str | None) -> object | None:
    """The result stored under ``k``, or None (caching off or refused, nothing stored, or a
    file that is not a whole entry of this cache: it is then computed again)."""
    where = folder()
    if where is None or k is None or not _usable(where):
        return None
    try:
        fd = os.open(where / f"{k}.pt", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
            return None
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_ENTRY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return _decode(torch.load(io.BytesIO(data), weights_only=True))
    except Exception:  # noqa: BLE001 (garbage, a truncated file, a pickle of something else)
        return None


def store(k: str | None, result: object) -> None:
    """Write ``result`` under ``k`` (whole or not at all: a temporary file, then a rename);
    nothing when it holds something the data-only form cannot hold, or the folder is refused."""
    where = folder()
    if where is None or k is None:
        return
    try:
        data = _encode(result)
    except _Uncacheable:
        return
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not _usable(where):
        return
    fd, tmp = tempfile.mkstemp(dir=where, prefix=".probe-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(data, f)
        os.replace(tmp, where / f"{k}.pt")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
