"""Generated malformed and hostile submissions for `drills grade` (Hypothesis strategies).

Every submission starts from the corpus solution of 01_exact_kl and is then damaged:

- the notebook's JSON: a field replaced by an odd value (a number, text, a list, null, a
  deep nest, a 5000-digit number), a key deleted, cells duplicated, dropped or replaced,
  ``metadata.nbgrader`` of any type, the nbformat version changed;
- its text: hostile characters (lone surrogates, NUL, BOM, right-to-left marks, non-breaking
  spaces, CRLF, line separators, markup) put into code and metadata;
- its bytes: ASCII or raw UTF-8 (a lone surrogate then makes the file invalid UTF-8), a BOM,
  CRLF line ends, cut short, invalid bytes, a duplicated key;
- the learner's code (``hostile_code``): forward_kl returns a generator, an object array, a
  subclass of float/int/str/list/dict, an object whose ``__repr__`` raises, a huge or deeply
  nested value, text with surrogates or NUL, or raises odd exceptions (a message that cannot
  be printed, a class name with a surrogate, KeyboardInterrupt, SystemExit...);
- what the child sends back (``child_blob``, for the parent-side runs): outcomes as raw JSON
  records, valid or not (huge integers, deep nests, surrogates, unknown forms), odd cell
  errors, notes and output. :func:`fake_execute` stands in for ``sandbox.execute`` and feeds
  them through the sandbox's own record checks (``parse_line``, ``validate_outcome``).

:func:`check_outputs` asserts the invariants of a class run: one row per submission in
grades.csv, and every output parses.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase
from hypothesis import strategies as st

from autograder.engine import sandbox

# The fuzz tests' settings (tests/test_fuzz_grade.py, tests/test_fuzz_layout.py): fixed-seed, and
# no shrinking: a failing class is reported as generated, in seconds rather than minutes
FUZZ_SETTINGS = dict(
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

REPO = Path(__file__).resolve().parent.parent
BASE = json.loads((REPO / "tests" / "fixtures" / "corpus" / "solution.ipynb").read_text())
ASSIGNMENT = "01_exact_kl"
FUNCTIONS = ["log_ratios", "forward_kl", "reverse_kl"]
SOLUTION_CELLS = {
    c["metadata"]["nbgrader"]["grade_id"]: i
    for i, c in enumerate(BASE["cells"])
    if c["metadata"].get("nbgrader", {}).get("solution")
}
BLOB_TAG = "# FUZZ-CHILD "

# Placeholders replaced in the serialised text: values json.dumps cannot write itself.
HUGE_INT = "__FUZZ_HUGE_INT__"
DEEP = "__FUZZ_DEEP__"

SPECIALS = [
    "\ud800",
    "\udfff",
    "\ud83d",
    "\x00",
    "\ufeff",
    "\u202e",
    "\u200f",
    "\u00a0",
    "\r\n",
    "\r",
    "\u2028",
    "\U0001f600",
    "\\",
    '"',
    "'",
    "<script>alert(1)</script>",
    "&amp;",
    "\t",
    "\x1b[31m",
    ",",
    "\n",
    "é",
]

hostile_text = st.lists(st.one_of(st.sampled_from(SPECIALS), st.text(max_size=4)), max_size=6).map(
    "".join
)

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    hostile_text,
    st.sampled_from([HUGE_INT, DEEP]),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(hostile_text, inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(x: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a node of the base notebook (not into the lines of a source)."""
    out = [prefix]
    if isinstance(x, dict):
        for k, v in x.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(x, list) and prefix[-1:] not in (("source",), ("outputs",)):
        for i, v in enumerate(x):
            out += _paths(v, (*prefix, i))
    return out


# Deepest first: Hypothesis leans towards the first choices, and replacing the list of
# cells (the first path) leaves nothing for the later stages to read.
PATHS = sorted((p for p in _paths(BASE) if p), key=len, reverse=True)


def _get(nb: Any, path: tuple) -> Any:
    for k in path:
        nb = nb[k]
    return nb


@st.composite
def json_mutation(draw, nb: dict) -> None:
    """One structural change of ``nb`` (in place)."""
    op = draw(
        st.sampled_from(
            ["replace", "replace", "delete", "nbgrader", "cells", "version", "source", "wrap"]
        )
    )
    cells = nb.get("cells")
    if op == "nbgrader" and isinstance(cells, list) and cells:
        i = draw(st.integers(0, len(cells) - 1))
        if isinstance(cells[i], dict) and isinstance(cells[i].get("metadata"), dict):
            meta = cells[i]["metadata"]
            if draw(st.booleans()) or not isinstance(meta.get("nbgrader"), dict):
                meta["nbgrader"] = draw(json_value)
            else:
                key = draw(st.sampled_from(["grade_id", "solution", "grade", "points", "locked"]))
                meta["nbgrader"][key] = draw(json_value)
        return
    if op == "cells" and isinstance(cells, list) and cells:
        i = draw(st.integers(0, len(cells) - 1))
        how = draw(st.sampled_from(["duplicate", "drop", "replace", "swap"]))
        if how == "duplicate":
            cells.insert(i, copy.deepcopy(cells[i]))
        elif how == "drop":
            del cells[i]
        elif how == "replace":
            cells[i] = draw(json_value)
        elif len(cells) > 1:
            j = draw(st.integers(0, len(cells) - 1))
            cells[i], cells[j] = cells[j], cells[i]
        return
    if op == "version":
        key = draw(st.sampled_from(["nbformat", "nbformat_minor"]))
        nb[key] = draw(st.one_of(st.integers(-1, 7), json_value))
        return
    if op == "source" and isinstance(cells, list):
        i = draw(st.sampled_from(sorted(SOLUTION_CELLS.values())))
        if i < len(cells) and isinstance(cells[i], dict) and "source" in cells[i]:
            src = cells[i]["source"]
            text = (
                "".join(src) if isinstance(src, list) and all(type(s) is str for s in src) else ""
            )
            at = draw(st.integers(0, len(text)))
            cells[i]["source"] = text[:at] + draw(hostile_text) + text[at:]
        return
    path = draw(st.sampled_from(PATHS))
    try:
        parent = _get(nb, path[:-1])
        key = path[-1]
        if not (isinstance(parent, dict) and key in parent) and not (
            isinstance(parent, list) and isinstance(key, int) and key < len(parent)
        ):
            return
        if op == "delete":
            del parent[key]
        elif op == "wrap":
            parent[key] = [parent[key]]
        else:
            parent[key] = draw(json_value)
    except (KeyError, IndexError, TypeError):
        return


@st.composite
def serialise(draw, nb: Any, plain: int = 6) -> bytes:
    """``nb`` as the bytes of a file, written in one of many (mostly hostile) ways; ``plain``
    of every ``plain + 6`` files are written as Jupyter would (their bytes undamaged)."""
    ascii_only = draw(st.booleans())
    try:
        text = json.dumps(nb, ensure_ascii=ascii_only, indent=draw(st.sampled_from([None, 1])))
    except (ValueError, RecursionError):
        text = "{}"
    text = text.replace(json.dumps(HUGE_INT), "9" * draw(st.integers(4000, 6000)))
    n = draw(st.integers(1, 3000))
    text = text.replace(json.dumps(DEEP), "[" * n + "]" * n)
    raw = text.encode("utf-8", "surrogatepass")
    how = draw(
        st.sampled_from(["plain"] * plain + ["bom", "crlf", "cut", "bytes", "dupkey", "garbage"])
    )
    if how == "bom":
        raw = b"\xef\xbb\xbf" + raw
    elif how == "crlf":
        raw = raw.replace(b"\n", b"\r\n")
    elif how == "cut":
        raw = raw[: draw(st.integers(0, max(0, len(raw) - 1)))]
    elif how == "bytes":
        at = draw(st.integers(0, len(raw)))
        raw = (
            raw[:at]
            + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"]))
            + raw[at:]
        )
    elif how == "dupkey":
        raw = raw.replace(b'"cells":', b'"cells": [], "cells":', 1)
    elif how == "garbage":
        raw = raw + draw(st.sampled_from([b"\n", b"x", b"{}", b"\x00"]))
    return raw


# -- the learner's code --------------------------------------------------------------------------

_RETURNS = [
    "return (x for x in policy)",
    "import numpy as np\n    return np.array([0.5, 'a', None], dtype=object)",
    "import numpy as np\n    return np.array(0.5, dtype=object)",
    "import numpy as np\n    return np.zeros(2, dtype=[('a', 'f8')])",
    "import numpy as np\n    return np.longdouble(0.25)",
    "import numpy as np\n    return np.datetime64('2020-01-01')",
    "import numpy as np\n    return np.array([2**62, -2**62])",
    "import numpy as np\n    return np.full((3, 0, 2), 0.5)",
    "class F(float):\n        def __repr__(self):\n            raise RuntimeError('no repr')\n"
    "        __str__ = __repr__\n    return F(0.3680)",
    "class I(int):\n        def __index__(self):\n            raise RuntimeError('no index')\n    return I(3)",
    "class S(str):\n        pass\n    return S({text!r})",
    "class L(list):\n        def __len__(self):\n            raise RuntimeError('no len')\n    return L([0.5])",
    "class D(dict):\n        pass\n    return D(a=1.0)",
    "class R:\n        def __repr__(self):\n            raise RuntimeError('no repr')\n"
    "        __str__ = __repr__\n    return R()",
    "class E:\n        def __eq__(self, other):\n            return True\n"
    "        def __float__(self):\n            return 0.368064\n    return E()",
    "return 10 ** {big}",
    "return [10 ** {big}, 0.5]",
    "return -(10 ** {big})",
    "return {text!r}",
    "return [{text!r}] * 3",
    "return {{{text!r}: 0.5}}",
    "return {{1: 2}}",
    "x = 0.5\n    for _ in range({depth}):\n        x = [x]\n    return x",
    "x = []\n    x.append(x)\n    return x",
    "return b'\\x00\\xff'",
    "return 1 + 2j",
    "return {{0.5}}",
    "return None",
    "return float('nan')",
    "return float('-inf')",
    "return forward_kl",
    "return int",
    "import math\n    return math",
    "return ...",
    "return memoryview(b'ab')",
    "return True",
    "return [0.5] * 100000",
    "raise ValueError({text!r})",
    "raise RuntimeError({text!r} * 400)",
    "class E(Exception):\n        def __str__(self):\n            raise RuntimeError('no str')\n    raise E()",
    "raise type({text!r} or 'X', (Exception,), {{}})('m')",
    "raise KeyboardInterrupt",
    "raise SystemExit({text!r})",
    "raise GeneratorExit",
    "raise ValueError(10 ** 5000)",
    "raise MemoryError",
    "raise RecursionError('deep')",
    "print({text!r})\n    return 0.368064",
    "import sys\n    sys.stderr.write({text!r})\n    return 0.368064",
    "import os\n    os.write(1, {text!r}.encode('utf-8', 'surrogatepass'))\n    return 0.368064",
]


@st.composite
def hostile_code(draw) -> str:
    """The source of a forward_kl cell that returns or raises something odd."""
    body = draw(st.sampled_from(_RETURNS)).format(
        text=draw(hostile_text),
        big=draw(st.sampled_from([300, 309, 400, 4299, 5000])),
        depth=draw(st.sampled_from([2, 31, 33, 40, 2000])),
    )
    guard = draw(st.booleans())
    head = "def forward_kl(policy, reference):\n"
    if guard:  # only on valid inputs: the input checks still pass
        head += "    _check_distributions(policy, reference, allow_zeros=True)\n"
    return head + "    " + body + "\n"


def hostile_class(rnd, n: int) -> list[bytes]:
    """``n`` submissions with distinct hostile forward_kl cells chosen by ``rnd`` (a
    random.Random): a class that covers many kinds of code in one run. Hypothesis's first
    example of a list is its simplest (every element the same), so the suite's one-example
    slice of real children draws its class from ``random.Random(seed)`` instead, the seed
    drawn by Hypothesis (0 first)."""
    out = []
    for body in rnd.sample(_RETURNS, n):
        text = "".join(rnd.choice(SPECIALS) for _ in range(rnd.randint(0, 4)))
        code = body.format(
            text=text, big=rnd.choice([300, 309, 4299, 5000]), depth=rnd.choice([31, 33, 2000])
        )
        head = "def forward_kl(policy, reference):\n"
        if rnd.random() < 0.5:
            head += "    _check_distributions(policy, reference, allow_zeros=True)\n"
        nb = _with_cell(BASE, "forward_kl", head + "    " + code + "\n")
        out.append(json.dumps(nb, ensure_ascii=rnd.random() < 0.5).encode("utf-8", "surrogatepass"))
    return out


# -- what the child sends back (parent-side runs) ----------------------------------------------

encoded_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([10**300, 10**309, -(10**400), 10**4200]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([{"$float": "nan"}, {"$float": "inf"}, {"$float": "-inf"}]),
    hostile_text,
)
encoded_value = st.recursive(
    encoded_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.builds(lambda d: {"$dict": d}, st.dictionaries(hostile_text, inner, max_size=3)),
        st.builds(
            lambda n, f: {"$obj": n, "fields": f},
            hostile_text,
            st.dictionaries(hostile_text, inner, max_size=3),
        ),
        st.builds(
            lambda vals, dtype: {"$array": vals, "shape": [len(vals)], "dtype": dtype},
            st.lists(
                st.one_of(
                    st.floats(allow_nan=False, allow_infinity=False),
                    st.integers(min_value=-(10**400), max_value=10**400),
                    st.booleans(),
                ),
                max_size=5,
            ),
            st.sampled_from(["float64", "int64", "bool", "float32", "complex128"]),
        ),
        st.dictionaries(hostile_text, inner, max_size=2),  # not an encoded form
    ),
    max_leaves=10,
)


@st.composite
def outcome_record(draw) -> str:
    """One outcome as the raw JSON text the child would write."""
    kind = draw(st.sampled_from(["value"] * 5 + ["raised"] * 2 + ["raw"]))
    if kind == "value":
        return json.dumps({"value": draw(encoded_value)})
    if kind == "raised":
        return json.dumps(
            {
                "raised": draw(st.one_of(hostile_text, st.sampled_from(["ValueError", "Timeout"]))),
                "message": draw(hostile_text),
            }
        )
    n = draw(st.sampled_from([32, 34, 5000]))
    return draw(
        st.sampled_from(
            [
                '{"value": ' + "9" * 5000 + "}",
                '{"value": ' + "[" * n + "]" * n + "}",
                '{"value": NaN}',
                '{"value": 1, "value": 2}',
                '{"value": "\\ud800\\udc00\\ud800"}',
                '{"raised": "\\udfff", "message": "\\u0000"}',
                '{"value": {"$dict": {"\\ud800": 0.5}}}',
                '{"value": {"$obj": "\\ud800", "fields": {"\\udc00": "\\ud800"}}}',
                "[]",
                '{"value": ',
            ]
        )
    )


def _leaf_paths(x: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(x, dict):
        for k, v in x.items():
            out += _leaf_paths(v, (*path, k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            out += _leaf_paths(v, (*path, i))
    return out


@st.composite
def records_near(draw, expected: list[dict]) -> list[str]:
    """Records that are the reference's outcomes with one part replaced by a hostile value
    (near misses reach the diagnosis of error shapes and known mistakes)."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        o = copy.deepcopy(expected[draw(st.integers(0, len(expected) - 1))])
        path = draw(st.sampled_from(_leaf_paths(o)))
        if path:
            _get(o, path[:-1])[path[-1]] = draw(encoded_value)
        else:
            o = {"value": draw(encoded_value)}
        out.append(json.dumps(o))
    return out


@st.composite
def child_blob(draw) -> dict:
    """What a (hostile) child reports: outcomes cycled over every case, cell errors, output."""
    return {
        "outcomes": draw(st.lists(outcome_record(), min_size=1, max_size=4)),
        "seconds": draw(st.sampled_from([0.0, 1e-9, 0.5, 999999.0])),
        "missing": draw(st.lists(st.sampled_from(FUNCTIONS), max_size=1)),
        "cell_error": draw(st.one_of(st.none(), hostile_text)),
        "setup_error": draw(st.one_of(st.none(), st.none(), st.none(), hostile_text)),
        "stdout": draw(hostile_text),
        "stderr": draw(hostile_text),
        "notes": draw(st.lists(hostile_text, max_size=2)),
    }


def blob_line(blob: dict) -> str:
    return BLOB_TAG + base64.b64encode(json.dumps(blob).encode("ascii")).decode("ascii") + "\n"


def _find_blob(cells) -> dict | None:
    for _, src in cells:
        for line in src.splitlines():
            if line.startswith(BLOB_TAG):
                try:
                    return json.loads(base64.b64decode(line[len(BLOB_TAG) :]))
                except ValueError:
                    return None
    return None


def fake_execute(cells, setup, cases, iso, limits, slot=0, max_runs=None, runner=None):
    """``sandbox.execute`` without a child: the records come from the blob in the learner's
    cell and pass the sandbox's own checks, as a real child's would."""
    blob = _find_blob(cells) or {"outcomes": ['{"raised": "NotImplementedError", "message": ""}']}
    ex = sandbox.Execution(
        functions={
            n: sandbox.FunctionRun(n, [None] * len(c), [0.0] * len(c)) for n, c in cases.items()
        }
    )
    if blob.get("setup_error") is not None:
        ex.setup_error = str(blob["setup_error"])[:1000]
        for fr in ex.functions.values():
            fr.error = "the setup cells failed in the sandbox: " + ex.setup_error
            fr.outcomes, fr.seconds = [], []
        return ex
    for name, fr in ex.functions.items():
        if name in blob.get("missing", []):
            fr.missing, fr.outcomes, fr.seconds = True, [], []
            continue
        for i in range(len(fr.outcomes)):
            text = blob["outcomes"][i % len(blob["outcomes"])]
            try:
                rec = sandbox.parse_line(
                    ('{"outcome": ' + text + "}").encode("utf-8", "surrogatepass")
                )
                fr.outcomes[i] = sandbox.validate_outcome(rec["outcome"])
            except sandbox.ProtocolError as e:
                fr.outcomes[i] = {
                    "raised": sandbox.INVALID,
                    "message": f"the program wrote something the grader does not accept ({e})",
                }
            fr.seconds[i] = float(blob.get("seconds", 0.0))
    if blob.get("cell_error") is not None and cells:
        ex.cell_errors[len(cells) - 1] = str(blob["cell_error"])[:1000]
    ex.stdout = str(blob.get("stdout", ""))
    ex.stderr = str(blob.get("stderr", ""))
    ex.notes = [str(n) for n in blob.get("notes", [])]
    ex.runs = 1
    return ex


@contextlib.contextmanager
def fake_sandbox():
    """``sandbox.execute`` replaced by :func:`fake_execute` while the block runs."""
    real = sandbox.execute
    sandbox.execute = fake_execute
    try:
        yield
    finally:
        sandbox.execute = real


# -- whole submissions -------------------------------------------------------------------------


def _with_cell(nb: dict, gid: str, source: str) -> dict:
    nb = copy.deepcopy(nb)
    nb["cells"][SOLUTION_CELLS[gid]]["source"] = source
    return nb


@st.composite
def submission_bytes(draw, mode: str) -> bytes:
    """One submission's file. ``mode``: "child" (hostile code for a real sandbox run) or
    "parent" (a child blob for :func:`fake_execute`); both with notebook damage."""
    nb = copy.deepcopy(BASE)
    if mode == "child":
        if draw(st.integers(0, 9)) < 8:
            nb = _with_cell(nb, "forward_kl", draw(hostile_code()))
        mutations = draw(st.integers(0, 9)) < 3
    else:
        cell = nb["cells"][SOLUTION_CELLS["forward_kl"]]
        cell["source"] = "".join(cell["source"]) + "\n" + blob_line(draw(child_blob()))
        mutations = draw(st.integers(0, 9)) < 6
    if mutations:
        for _ in range(draw(st.integers(1, 3))):
            draw(json_mutation(nb))
    return draw(serialise(nb, plain=6 if mode == "parent" else 54))


def grade_command(folder: Path, out: Path, jobs: int = 2) -> list[str]:
    """`drills grade` on a fuzzed class (run twice: the rerun must give the same grades.csv)."""
    return [
        sys.executable, "-m", "autograder.cli", "grade", str(folder), "--out", str(out),
        "--assignment", ASSIGNMENT, "--jobs", str(jobs), "--timeout", "5",
    ]  # fmt: skip


def write_class(folder: Path, files: list[bytes]) -> list[str]:
    """The submissions as folder/s0000.ipynb ...; returns the student ids."""
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for i, raw in enumerate(files):
        name = f"s{i:04d}"
        (folder / f"{name}.ipynb").write_bytes(raw)
        names.append(name)
    return names


def _strict_json(text: str) -> Any:
    def no_constant(name):
        raise ValueError(f"{name} in JSON output")

    return json.loads(text, parse_constant=no_constant)


def check_outputs(out: Path, names: list[str]) -> list[dict]:
    """The invariants of a finished class run in ``out``; returns the rows of grades.csv."""
    text = (out / "grades.csv").read_bytes().decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert sorted(r["student_id"] for r in rows) == sorted(names), "one row per submission"
    results = _strict_json((out / "results.json").read_bytes().decode("utf-8"))
    assert sorted(s["student"] for s in results["submissions"]) == sorted(names)
    ungraded = {s["student"] for s in results["submissions"] if s.get("error")}
    for r in rows:
        assert r["assignment"] == ASSIGNMENT
        if r["student_id"] in ungraded:  # no grade: an empty cell, never a 0 (the error says why)
            assert r["score"] == r["raw_score"] == "", r
        else:
            assert 0.0 <= float(r["score"]) <= float(r["max_score"]), r
    lines = (out / "results.jsonl").read_bytes().decode("utf-8").split("\n")[:-1]
    for line in lines:
        _strict_json(line)
    _strict_json((out / "report.json").read_bytes().decode("utf-8"))
    _strict_json((out / "run.json").read_bytes().decode("utf-8"))
    (out / "report.html").read_bytes().decode("utf-8")
    list(csv.reader(io.StringIO((out / "canvas.csv").read_bytes().decode("utf-8"), newline="")))
    for n in names:
        (out / "feedback" / n / f"{ASSIGNMENT}.html").read_bytes().decode("utf-8")
    return rows
