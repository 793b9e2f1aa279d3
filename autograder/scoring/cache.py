"""The outcome cache: expected and known-mistake outcomes computed once, not on every check.

Expected outcomes come from running the source notebook's solution on every
case (for 05 and 06 that means importing torch), and a known mistake's from
running its mutant. Both depend only on trusted things, so they are computed
once and kept on disk, keyed by everything they depend on:

    format      the layout of entries (``FORMAT`` below)
    code        the case module, the modules it imports from ``autograder``, and the
                engine modules that turn cases into outcomes (spec, codec, seeds, ...)
    source      the source notebook's bytes
    secret      a digest of the course secret (never the secret itself)
    student     the student id, when generated inputs depend on it
    libraries   Python, numpy and torch versions (read without importing them)
    + what the entry is for (assignment, function, a digest of the case inputs)

Where: ``$DRILLS_CACHE_DIR``, else ``$XDG_CACHE_HOME/reward-drills``, else
``~/.cache/reward-drills``; ``DRILLS_CACHE=off`` turns it off. It holds at most
``$DRILLS_CACHE_MAX_MB`` (512 MB by default): past that the oldest entries go. The folder is
private to the user (0700): with a course secret, its entries hold generated
inputs. The sandbox never sees it (engine/sandbox/bubblewrap.py covers it up when a bound
folder contains it).

Every entry is one JSON file ``<dir>/v<FORMAT>/<kind>/<digest of key>.json`` holding
its key, its value and an HMAC of both under the folder's key: ``<dir>/key``, 32 random
bytes created once, 0600, by the first writer. The HMAC covers the value's bytes exactly as
written (the entry's last field), so reading an entry checks it without writing its value
out again (which cost as much as parsing it: a class of 100 submissions read 15 MB). A plain checksum can be recomputed by anyone
who can write the folder (forged entries in a shared folder turned a correct notebook's 7.0
into 4.45); an HMAC cannot without the key. The folder is used only when it is owned by this
user and no one else can write it, and the key only when it is a regular file of this user
that no one else can read or write (not a link): otherwise the cache is refused, as if it were
turned off, with one line on stderr saying why (:func:`refusal`).

A value comes back exactly as it was stored, its dicts' keys in their order (an encoded
array's ``$array``, ``shape``, ``dtype``, an object's fields, a learner-visible ``$dict``): a
cached value renders, and compares, as the freshly computed one, so a cold and a warm cache
give the same feedback. It is written to a temporary file in the same folder and renamed over
the old one (``os.replace``), so concurrent writers never leave a mixed file and a reader sees
a whole entry or none. An entry whose HMAC, key or format does not match (truncated, edited,
forged, another key's) is ignored and rebuilt, never trusted.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# 2: values keep their dicts' key order (1 sorted them: feedback differed warm/cold);
# 3: entries carry an HMAC under the folder's key instead of a checksum anyone can recompute;
# 4: the HMAC covers the value's bytes as written, the value last in the entry
FORMAT = 4
PACKAGE = Path(__file__).resolve().parents[1]  # autograder/, above scoring/
# Engine modules whose code decides what an outcome is (besides the case module itself).
ENGINE = (  # under autograder/: the modules that compute or key a cached outcome
    "cases/spec",
    "cases/codec",
    "cases/seeds",
    "notebooks/nbjson",
    "notebooks/notebook",
    "notebooks/reference",
    "notebooks/source",
    "scoring/evaluate",
    "scoring/served",
    "scoring/relations",
    "assignments/probes",
    "scoring/memo",
    "scoring/cache",
)
_IMPORT = re.compile(
    r"^\s*(?:from\s+(autograder(?:\.\w+)*)\s+import\s+([\w ,()]+)|import\s+(autograder(?:\.\w+)*))",
    re.M,
)


def switched_off(variable: str) -> bool:
    """Is the on/off environment switch ``variable`` (DRILLS_CACHE, DRILLS_WARM, ...) set off?"""
    return os.environ.get(variable, "").lower() in ("0", "off", "no", "false")


def directory() -> Path | None:
    """The cache folder, or None when caching is turned off."""
    if switched_off("DRILLS_CACHE"):
        return None
    env = os.environ.get("DRILLS_CACHE_DIR")
    if env is not None:
        return Path(env).expanduser() if env.strip() else None
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "reward-drills"


# -- key parts ---------------------------------------------------------------------------------


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def secret_digest(secret: str) -> str:
    """A digest standing for the secret in keys (the secret itself is never written)."""
    return _sha(b"reward-drills cache key\x1f" + secret.encode("utf-8"))


# Digests already computed in this process, each with the (mtime, size, inode) of the files it
# read, taken before reading them: a file changed since gives a new signature and a fresh
# digest, so a long grading run (or a test that edits a case module) never keys with stale code.
# As git does with "racily clean" files, a digest is remembered only when every file it read
# was last modified more than RACY_S seconds earlier: file times are coarse (a few ms), and an
# edit that keeps the size within that window would otherwise go unseen.
_DIGESTS: dict[Any, tuple[tuple, tuple, str]] = {}
RACY_S = 2.0


def _remember(key: Any, files: tuple[Path, ...], sig: tuple, digest: str) -> None:
    newest = max((s[0] for s in sig if s is not None), default=None)
    if newest is not None and time.time_ns() - newest > RACY_S * 1e9:
        _DIGESTS[key] = (files, sig, digest)


def _signature(files: tuple[Path, ...]) -> tuple:
    out = []
    for f in files:
        try:
            st = f.stat()
        except OSError:
            out.append(None)
        else:
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(out)


def _memo(key: Any) -> str | None:
    hit = _DIGESTS.get(key)
    if hit is not None and _signature(hit[0]) == hit[1]:
        return hit[2]
    return None


def file_digest(path: Path) -> str:
    path = Path(path)
    found = _memo(("file", path))
    if found is None:
        files = (path,)
        sig = _signature(files)
        found = _sha(path.read_bytes())
        _remember(("file", path), files, sig, found)
    return found


def _module_file(name: str, package: Path) -> Path | None:
    """autograder.x.y -> <package>/x/y.py (or its __init__.py), without importing it."""
    parts = name.split(".")[1:]
    base = package.joinpath(*parts) if parts else package
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(source: str, package: Path) -> set[Path]:
    """Files of the autograder modules that the module ``source`` imports (one level)."""
    out = set()
    for m in _IMPORT.finditer(source):
        mod = m.group(1) or m.group(3)
        names = [n.strip(" ()") for n in (m.group(2) or "").split(",") if n.strip(" ()")]
        for name in [mod] + [f"{mod}.{n.split(' as ')[0].strip()}" for n in names]:
            f = _module_file(name, package)
            if f is not None:
                out.add(f)
    return out


def code_digest(assignment: str, package: Path | None = None) -> str:
    """Digest of the case module of ``assignment``, every autograder module it imports
    (followed transitively: ``common.py``, ``spec.py``, ...) and the ENGINE modules."""
    from autograder.assignments import MODULES

    package = package or PACKAGE
    found = _memo(("code", assignment, package))
    if found is not None:
        return found
    start = package / "assignments" / f"{MODULES[assignment]}.py"
    todo = [start, *(package / f"{m}.py" for m in ENGINE)]
    texts: dict[Path, bytes] = {}  # each file read once: its imports and its digest
    sigs: dict[Path, Any] = {}
    while todo:
        f = todo.pop()
        if f in texts or not f.is_file():
            continue
        sigs[f] = _signature((f,))[0]  # before the read, as _remember expects
        texts[f] = f.read_bytes()
        todo += _imported(texts[f].decode("utf-8"), package)
    files = tuple(sorted(texts))
    sig = tuple(sigs[f] for f in files)
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(package)).encode() + b"\0" + texts[f] + b"\0")
    _remember(("code", assignment, package), files, sig, h.hexdigest())
    return h.hexdigest()


def _version(dist: str) -> str:
    """A distribution's version from its dist-info folder name (no import, no metadata parse)."""
    import importlib.util

    spec = importlib.util.find_spec(dist)
    if spec is None or not spec.submodule_search_locations:
        return "absent"
    site = Path(list(spec.submodule_search_locations)[0]).parent
    found = sorted(site.glob(f"{dist}-*.dist-info"))
    if len(found) == 1:
        return found[0].name[len(dist) + 1 : -len(".dist-info")]
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


_VERSIONS: dict[str, str] = {}


def library_versions() -> dict[str, str]:
    """Python, numpy and torch versions: a new version may compute other outcomes."""
    if not _VERSIONS:
        _VERSIONS.update(
            python=sys.version.split()[0] + "/" + sys.implementation.cache_tag,
            numpy=_version("numpy"),
            torch=_version("torch"),
        )
    return dict(_VERSIONS)


def assignment_key(
    assignment: str, source: Path, secret: str, student: str | None = None
) -> dict[str, Any]:
    """The key parts every entry of ``assignment`` shares."""
    return {
        "format": FORMAT,
        "assignment": assignment,
        "code": code_digest(assignment),
        "source": file_digest(source),
        "secret": secret_digest(secret),
        "student": student or "",
        "libraries": library_versions(),
    }


def inputs_digest(inputs: Any) -> str:
    """Encoded inputs as part of a key; dicts in their order (two inputs that differ in the
    order of a dict's keys may give different outcomes)."""
    return _sha(_ordered(inputs))


# -- entries -----------------------------------------------------------------------------------


def _canonical(x: Any) -> bytes:
    """Keys and checksums: the same bytes whatever the order a key's dict was built in."""
    return json.dumps(x, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _ordered(x: Any) -> bytes:
    """Values as stored: every dict's keys in their own order, which json.loads keeps."""
    return json.dumps(x, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _entry_path(root: Path, kind: str, key: dict) -> Path:
    return root / f"v{FORMAT}" / kind / f"{_sha(_canonical([kind, key]))}.json"


# -- the folder and its key -----------------------------------------------------------------------

KEY_FILE = "key"
KEY_BYTES = 32
_KEYS: dict[tuple, bytes] = {}  # (folder, the key file's identity and mode) -> the key, once read
_WARNED: set[str] = set()


def _mine(st: os.stat_result) -> bool:
    return not hasattr(os, "geteuid") or st.st_uid == os.geteuid()


def refusal(root: Path) -> str | None:
    """Why the cache folder ``root`` must not be used (None: it may). It is refused when it is
    not a folder of this user, or another user can write it (anyone who can write it can
    replace entries and the key); its key (:func:`folder_key`) is checked when it is read."""
    try:
        st = os.stat(root)
    except FileNotFoundError:
        return None  # created private by the first store
    except OSError as e:
        return f"the outcome cache folder {root} cannot be read ({e.strerror or e})"
    if not stat.S_ISDIR(st.st_mode):
        return f"the outcome cache folder {root} is not a folder"
    if not _mine(st):
        return f"the outcome cache folder {root} belongs to another user"
    if st.st_mode & 0o022:
        return (
            f"the outcome cache folder {root} can be written by other users "
            f"(mode {stat.S_IMODE(st.st_mode):o}); make it private (chmod 700) or set "
            "DRILLS_CACHE_DIR to a folder of your own"
        )
    return None


def _read_key(path: Path) -> bytes | None:
    """The key at ``path``; None when there is none; ValueError when it is not to be trusted."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as e:  # ELOOP: a link
        raise ValueError(f"its key {path} cannot be opened safely ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _mine(st) or st.st_mode & 0o077:
            raise ValueError(
                f"its key {path} is not a private file of this user (it must be mode 600)"
            )
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise ValueError(f"its key {path} is not {KEY_BYTES} bytes long")
    return data


def folder_key(root: Path, create: bool = False) -> bytes | None:
    """The key that authenticates the entries of ``root``, or None when the folder is refused
    (:func:`refusal`, or a key not to trust) or has no key yet and ``create`` is False. A new
    key is written whole (a private temporary file, then linked in place: a concurrent writer's
    key wins and both use it)."""
    why = refusal(root)
    key = None
    if why is None:
        try:
            ks = os.lstat(root / KEY_FILE)
            seen = (str(root), ks.st_dev, ks.st_ino, ks.st_mtime_ns, ks.st_mode, ks.st_uid)
        except OSError:
            seen = None
        if seen is not None and seen in _KEYS:
            return _KEYS[seen]
        try:
            key = _read_key(root / KEY_FILE)
            if key is None and create:
                root.mkdir(parents=True, exist_ok=True, mode=0o700)
                why = refusal(root)
                if why is None:
                    fd, tmp = tempfile.mkstemp(prefix=".key-", dir=root)  # 0600
                    try:
                        os.write(fd, secrets.token_bytes(KEY_BYTES))
                        os.close(fd)
                        try:
                            os.link(tmp, root / KEY_FILE)
                        except FileExistsError:
                            pass  # another writer's key came first: use it
                    finally:
                        os.unlink(tmp)
                    key = _read_key(root / KEY_FILE)
        except ValueError as e:
            why = f"the outcome cache folder {root} is refused: {e}"
        except OSError:
            return None  # cannot be written (a read-only home): no cache, nothing to say
    if why is not None:
        if why not in _WARNED:
            _WARNED.add(why)
            print(f"note: {why}; outcomes are computed, not cached", file=sys.stderr)
        return None
    if key is not None:
        ks = os.lstat(root / KEY_FILE)
        _KEYS[(str(root), ks.st_dev, ks.st_ino, ks.st_mtime_ns, ks.st_mode, ks.st_uid)] = key
    return key


def _mac(key: bytes, kind: str, k: dict, value: bytes) -> str:
    """The HMAC of an entry: what it is for (canonical) and its value's bytes as written."""
    return hmac.new(key, _canonical([kind, k]) + b"\n" + value, hashlib.sha256).hexdigest()


_VALUE = b',"value":'


def _head(kind: str, key: dict, mac: str) -> bytes:
    """An entry's bytes before its value: the value is written last, after ``_VALUE``."""
    return _ordered({"format": FORMAT, "kind": kind, "key": key, "mac": mac})[:-1] + _VALUE


def load(kind: str, key: dict, root: Path | None = None) -> Any | None:
    """The value stored under ``key``, or None (no entry, caching off or refused, or an entry
    not to trust: its HMAC under the folder's key does not match)."""
    root = root if root is not None else directory()
    if root is None:
        return None
    secret = folder_key(root)
    if secret is None:
        return None
    try:
        text = _entry_path(root, kind, key).read_bytes()
        entry = json.loads(text)
        if (
            type(entry) is not dict
            or entry.get("format") != FORMAT
            or entry.get("kind") != kind
            or entry.get("key") != key
            or type(entry.get("mac")) is not str
            or list(entry) != ["format", "kind", "key", "mac", "value"]
        ):
            return None
        # The value's bytes are where the entry's own head (written back as it was read: a
        # key's dict keeps its order, a float its shortest repr) says they start; a file
        # written any other way does not line up and fails the HMAC.
        head = _head(kind, entry["key"], entry["mac"])
        if not text.startswith(head) or not text.endswith(b"}"):
            return None
        if not hmac.compare_digest(entry["mac"], _mac(secret, kind, key, text[len(head) : -1])):
            return None
        return entry["value"]
    except (OSError, ValueError, TypeError, RecursionError):
        return None


DEFAULT_MAX_MB = 512
PRUNE_EVERY = 256  # stores per process between two looks at the folder's size
_STORES = [0]


def max_bytes() -> int:
    """The folder's size limit: $DRILLS_CACHE_MAX_MB, else DEFAULT_MAX_MB."""
    try:
        return int(float(os.environ.get("DRILLS_CACHE_MAX_MB", DEFAULT_MAX_MB)) * 1024 * 1024)
    except ValueError:
        return DEFAULT_MAX_MB * 1024 * 1024


def prune(root: Path | None = None, limit: int | None = None) -> int:
    """Remove the entries of other formats, then the least recently written entries until the
    folder holds at most 3/4 of ``limit`` bytes (once it holds more than ``limit``); returns
    how many files were removed. Per-student entries of a large class would otherwise grow
    without end."""
    root = root if root is not None else directory()
    if root is None or not root.is_dir():
        return 0
    limit = max_bytes() if limit is None else limit
    removed = 0
    for old in root.glob("v*"):
        if old.is_dir() and old.name != f"v{FORMAT}":
            shutil.rmtree(old, ignore_errors=True)
            removed += 1
    entries = []
    for f in (root / f"v{FORMAT}").glob("*/*.json"):
        try:
            st = f.stat()
        except OSError:
            continue
        entries.append((st.st_mtime, st.st_size, f))
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return removed
    for _, size, f in sorted(entries, key=lambda e: e[0]):
        if total <= limit * 3 // 4:
            break
        try:
            f.unlink()
            total -= size
            removed += 1
        except OSError:
            pass
    return removed


def store(kind: str, key: dict, value: Any, root: Path | None = None) -> bool:
    """Write ``value`` under ``key`` atomically; False (and no file) when it cannot be written."""
    root = root if root is not None else directory()
    if root is None:
        return False
    secret = folder_key(root, create=True)
    if secret is None:
        return False
    try:
        data = _ordered(value)
        body = _head(kind, key, _mac(secret, kind, key, data)) + data + b"}"
    except (TypeError, ValueError):
        return False  # not plain JSON: not cached
    path = _entry_path(root, kind, key)
    tmp = None
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        # every folder of ours 0700 (mkdir's mode reaches the last one only), entries 0600
        path.parent.parent.mkdir(exist_ok=True, mode=0o700)
        path.parent.mkdir(exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        os.replace(tmp, path)
        _STORES[0] += 1
        if _STORES[0] % PRUNE_EVERY == 0:
            prune(root)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False


# -- outlines of case specs --------------------------------------------------------------------

# A case's inputs are kept apart (materialized, per secret and student): not in its outline.
_INPUT_FIELDS = {("Case", "args"), ("Case", "kwargs")}
# Anchors (hand-computed expected values) are read by the tests only, never by scoring.
_TEST_ONLY_FIELDS = {("Case", "expected"), ("Case", "anchor"), ("FunctionSpec", "anchors")}


class NotOutlined(ValueError):
    """A spec holds a value that has no faithful plain-JSON outline (so it is not cached)."""


def _outline(v: Any) -> Any:
    import dataclasses
    import math

    t = type(v)
    if v is None or t in (bool, int, str):
        return v
    if t is float:
        return v if math.isfinite(v) else {"$float": repr(v)}
    if (
        dataclasses.is_dataclass(v)
        and not isinstance(v, type)
        and t.__module__ == "autograder.cases.spec"
    ):
        return {
            "$spec": t.__name__,
            "fields": {
                f.name: _outline(getattr(v, f.name))
                for f in dataclasses.fields(v)
                if (t.__name__, f.name) not in _INPUT_FIELDS | _TEST_ONLY_FIELDS
            },
        }
    if t is tuple:
        return {"$tuple": [_outline(x) for x in v]}
    if t is list:
        return [_outline(x) for x in v]
    if t is dict and all(type(k) is str for k in v):
        return {"$dict": {k: _outline(x) for k, x in v.items()}}
    if isinstance(v, type):
        if issubclass(v, BaseException) and v.__module__ == "builtins":
            return {"$exception": v.__name__}
        raise NotOutlined(f"no plain outline for the type {v.__name__}")
    if callable(v):
        return {"$callable": str(getattr(v, "__name__", "function"))[:100]}
    raise NotOutlined(f"no plain outline for a {t.__name__}")


def _from_outline(j: Any) -> Any:
    import builtins

    from autograder.cases import spec

    if type(j) is list:
        return [_from_outline(x) for x in j]
    if type(j) is not dict:
        return j
    if "$spec" in j:
        cls = getattr(spec, j["$spec"])
        return cls(**{k: _from_outline(v) for k, v in j["fields"].items()})
    if "$tuple" in j:
        return tuple(_from_outline(x) for x in j["$tuple"])
    if "$dict" in j:
        return {k: _from_outline(v) for k, v in j["$dict"].items()}
    if "$float" in j:
        return float(j["$float"])
    if "$exception" in j:
        exc = getattr(builtins, j["$exception"])
        if not (isinstance(exc, type) and issubclass(exc, BaseException)):
            raise ValueError("not an exception")
        return exc
    if "$callable" in j:
        name = j["$callable"]

        def outline_only(*_a: Any, **_k: Any) -> Any:
            raise RuntimeError(f"{name}: only an outline of this spec was loaded from the cache")

        outline_only.__name__ = name
        return outline_only
    raise ValueError("not an outline")


def spec_outline(fspec: Any) -> dict:
    """A FunctionSpec as plain JSON for scoring without importing its case module: every
    field of it, its cases and its mistakes, generators and mutant builders as stand-ins
    (a generated case stays generated), case inputs left out. NotOutlined if a field
    holds something without a faithful plain form."""
    return _outline(fspec)


def spec_from_outline(outline: dict) -> Any:
    """The FunctionSpec back from :func:`spec_outline` (stand-ins raise if called)."""
    return _from_outline(outline)
