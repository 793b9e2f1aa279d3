"""A throwaway nbgrader course in a temporary folder, and learner notebooks to put in it.

Used by the agreement test (drills grade vs nbgrader), the benchmark and the
nbgrader round-trip test. The API is small:

    course = make_course(tmp, ["01_exact_kl"])         # generate_assignment for each (one process)
    submit(course, "alice", "01_exact_kl", notebook)    # submitted/alice/01_exact_kl/01_exact_kl.ipynb
    autograde(course, "01_exact_kl")                    # every submitted student, one call
    rows = export(course)                               # nbgrader export's CSV as dicts
    rows = round_trip(course, ["01_exact_kl"])          # autograde each, then export: one process

    learner_notebooks("01_exact_kl", slim=True)         # only the cells with nbgrader metadata

    learner_notebooks("01_exact_kl")                    # {"solution": nb, "stub": nb, "mistakes-1": nb, ...}

nbgrader runs as ``python -m nbgrader`` with this interpreter's bin/ first on
PATH (nbgrader shells out to ``alembic``).

Learner notebooks with a catalogued mistake are standalone source: a mutant is
a closure over the reference, so instead of its code the notebook holds a
*replay* of it: the reference cell, then a function of the same name that looks
its inputs up in a table of the mutant's outcomes on the graded cases (made with
the course's default secret) and returns or raises exactly that. Both engines
call it on the same inputs, so both see the mutant's behaviour; on other inputs
(the notebook's own self-checks, or another graded function calling it) it is the
reference, as the mutant's own calls into the reference namespace are.

Generated inputs are per student, so a replay is made for one student id: by
default each notebook for the student named like it ("mistakes-1" is graded as
student "mistakes-1"), or for the ``student`` given.
"""

from __future__ import annotations

import copy
import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from autograder.notebooks import release

REPO = Path(__file__).resolve().parent.parent

# The release's scratch-course configuration, plus a per-cell time limit for autograde.
CONFIG = release.CONFIG + "c.ExecutePreprocessor.timeout = 120\n"


def _env() -> dict[str, str]:
    env = release.nbgrader_env()  # the venv's bin/ first on PATH: nbgrader runs `alembic`
    env.setdefault("DRILLS_COURSE_ROOT", str(REPO))
    return env


def _in_course(course: Path, argv: list[str], what: str) -> subprocess.CompletedProcess:
    """This interpreter with ``argv`` in ``course``; RuntimeError naming ``what`` if it fails."""
    proc = subprocess.run(
        [sys.executable, *argv], cwd=course, env=_env(), capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def _nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    return _in_course(course, ["-m", "nbgrader", *args], f"nbgrader {' '.join(args)}")


def make_course(tmp: Path, assignments: list[str]) -> Path:
    """An nbgrader course under ``tmp`` with ``assignments`` generated from solutions/."""
    course = Path(tmp) / "course"
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(CONFIG.format(root=str(course)))
    for a in assignments:
        shutil.copytree(
            REPO / "solutions" / a,
            course / "solutions" / a,
            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
        )
    _batch(course, [("generate_assignment", a) for a in assignments])  # one process for all
    return course


def submit(course: Path, student: str, assignment: str, nb) -> Path:
    folder = Path(course) / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{assignment}.ipynb"
    nbformat.write(nb, str(path))
    return path


def autograde(course: Path, assignment: str) -> None:
    """nbgrader autograde for every student who submitted ``assignment``."""
    _nbgrader(course, "autograde", assignment, "--create", "--force")


def export(course: Path) -> list[dict]:
    out = Path(course) / "grades.csv"
    _nbgrader(course, "export", "--to", str(out))
    with out.open(newline="") as f:
        return list(csv.DictReader(f))


# ``python -m nbgrader`` costs about 5 s of CPU to start; a course of 7 assignments took 21
# of them (generate_assignment, autograde, export each). _BATCH_SRC runs a list of steps in one
# interpreter through nbgrader's Python API (what its formgrader uses).
_BATCH_SRC = r"""
import json, sys
from nbgrader.apps import NbGraderAPI
from nbgrader.apps.exportapp import ExportApp
from traitlets.config.loader import PyFileConfigLoader

course, steps = sys.argv[1], json.loads(sys.argv[2])
config = PyFileConfigLoader("nbgrader_config.py", path=course).load_config()
api = NbGraderAPI(config=config)
for step, arg in steps:
    if step == "export":
        app = ExportApp(config=config)
        app.initialize(["--to", arg])
        app.start()
        continue
    r = api.generate_assignment(arg) if step == "generate_assignment" else api.autograde(arg, "*")
    if not r["success"]:
        sys.exit(f"nbgrader {step} {arg} failed:\n{r.get('log', '')[-3000:]}\n{r.get('error', '')}")
"""


def _batch(course: Path, steps: list[tuple[str, str]]) -> None:
    _in_course(course, ["-c", _BATCH_SRC, str(course), json.dumps(steps)], f"nbgrader {steps}")


def round_trip(course: Path, assignments: list[str]) -> list[dict]:
    """autograde (every submitted student) of each of ``assignments``, then export, in one
    nbgrader process: nbgrader export's CSV as dicts."""
    out = Path(course) / "grades.csv"
    _batch(course, [("autograde", a) for a in assignments] + [("export", str(out))])
    with out.open(newline="") as f:
        return list(csv.DictReader(f))


# -- learner notebooks -------------------------------------------------------------------------

# The key of a call's inputs: the same text in the test (to build the table) and in the notebook.
KEY_SRC = r"""
def _drills_key(x):
    t = type(x)
    if x is None or t in (bool, int, str):
        return repr(x)
    if t is float:
        return float.hex(x)
    if t in (list, tuple):
        return "[" + ",".join(_drills_key(v) for v in x) + "]"
    if t is dict:
        return "{" + ",".join(repr(k) + ":" + _drills_key(x[k]) for k in sorted(x)) + "}"
    mod = t.__module__ or ""
    if mod.startswith("numpy"):
        import numpy as _np
        a = _np.asarray(x)
        return "A" + str(a.dtype) + repr(a.shape) + _drills_key([float(v) for v in a.ravel().tolist()])
    if mod.startswith("torch"):
        return "T" + str(x.dtype) + repr(tuple(x.shape)) + _drills_key([float(v) for v in x.detach().reshape(-1).tolist()])
    import dataclasses as _dc
    if _dc.is_dataclass(x):
        return t.__name__ + "(" + ",".join(f.name + "=" + _drills_key(getattr(x, f.name)) for f in _dc.fields(x)) + ")"
    if callable(x):
        return "fn:" + getattr(x, "__name__", "?")
    return "?" + t.__name__
"""

PLAY_SRC = r"""
def _drills_value(j):
    if isinstance(j, list):
        return [_drills_value(v) for v in j]
    if isinstance(j, dict):
        if "$float" in j:
            return float(j["$float"])
        if "$array" in j:
            import numpy as _np
            return _np.array([_drills_value(v) for v in j["$array"]], dtype=j["dtype"]).reshape(j["shape"])
        if "$tensor" in j:
            import torch as _torch
            flat = [_drills_value(v) for v in j["$tensor"]]
            return _torch.tensor(flat, dtype=getattr(_torch, j["dtype"])).reshape(j["shape"])
        if "$dict" in j:
            return {k: _drills_value(v) for k, v in j["$dict"].items()}
        if "$obj" in j:
            return globals()[j["$obj"]](**{k: _drills_value(v) for k, v in j["fields"].items()})
    return j


def _drills_wants_grad(args, kwargs):
    return any(getattr(v, "requires_grad", False) is True for v in [*args, *kwargs.values()])


def _drills_grad_play(o, args, kwargs, reference, seed):
    # A result whose gradient is the recorded one: the reference's value (a gradient case
    # grades the gradient only) plus the sum of <x - x.detach(), G_x> over the recorded
    # gradients G_x (ones for a detached input that gradient reached), on the first element
    # divided by the first weight of the grader's linear functional for a non-scalar result.
    if "raised" in o:
        if o["raised"] == "NoGradient":
            return 0.0
        return _drills_outcome(o)
    import inspect
    import torch as _torch
    bound = inspect.signature(reference).bind(*args, **kwargs)
    bound.apply_defaults()
    out = reference(*args, **kwargs).detach().clone()
    extra = None
    for pname, g in o["value"]["$dict"].items():
        if g == "no gradient":
            continue
        x = bound.arguments[pname]
        G = _torch.ones_like(x) if g == "gradient" else _drills_value(g).to(x.dtype)
        term = ((x - x.detach()) * G).sum()
        extra = term if extra is None else extra + term
    if extra is None:
        return out
    if out.numel() == 1:
        return out + extra.to(out.dtype)
    gen = _torch.Generator().manual_seed(seed)
    w0 = float(_torch.randn(out.numel(), generator=gen, dtype=_torch.float64)[0])
    first = _torch.zeros(out.numel(), dtype=out.dtype)
    first[0] = 1.0
    return out + (first * (extra / w0).to(out.dtype)).reshape(out.shape)


def _drills_play(table, name, args, kwargs, reference, grads=None, seed=0):
    k = _drills_key([list(args), dict(kwargs)])
    if grads is not None and _drills_wants_grad(args, kwargs) and grads.get(k):
        return _drills_grad_play(grads[k][0], args, kwargs, reference, seed)
    outs = table.get(k)
    if not outs:
        return reference(*args, **kwargs)
    return _drills_outcome(outs[0])


def _drills_outcome(o):
    if "value" in o:
        return _drills_value(o["value"])
    if o["raised"] == "UnsupportedReturn":
        return object()
    import builtins as _b
    exc = getattr(_b, o["raised"], None)
    if not (isinstance(exc, type) and issubclass(exc, BaseException)):
        exc = type(o["raised"], (Exception,), {})
    raise exc(o.get("message", ""))
"""


def _ns_of(src: str) -> dict:
    ns: dict = {}
    exec(src, ns)  # noqa: S102 (our own helper text)
    return ns


def _strip_markers(src: str) -> str:
    return re.sub(r"\n[ \t]*### (BEGIN|END) SOLUTION[^\n]*", "", src)


def replay_source(
    assignment: str,
    function: str,
    mistake_id: str,
    reference_cell: str,
    student: str | None,
    secret: str | None = None,
) -> str:
    """The reference cell, then ``function`` replaced by a replay of the mistake's outcomes
    on ``student``'s inputs (under ``secret``, default the secret in force)."""
    from autograder import assignments
    from autograder.cases import codec, seeds
    from autograder.notebooks import reference
    from autograder.scoring import evaluate, memo

    fspec = assignments.get(assignment).function(function)
    inputs = evaluate.materialize(assignment, fspec, seeds.course_secret(secret), student)
    outcomes = memo.mistake_outcomes(assignment, fspec, inputs)[mistake_id]
    ns = reference.namespace(assignment)
    key = _ns_of(KEY_SRC)["_drills_key"]
    table: dict[str, list] = {}
    grads: dict[str, list] = {}  # gradient cases: played when the inputs require grad
    for inp, out in zip(inputs, outcomes):
        k = key([codec.decode(inp["args"], ns), codec.decode(inp["kwargs"], ns)])
        (grads if "grad" in inp else table).setdefault(k, []).append(out)
    return (
        _strip_markers(reference_cell).rstrip() + "\n\n\n# A replay of the catalogued mistake "
        f"{mistake_id!r} (see tests/nbgrader_course.py).\nimport json as _drills_json\n"
        + KEY_SRC
        + PLAY_SRC
        + f"\n_DRILLS_TABLE_{function} = _drills_json.loads({json.dumps(json.dumps(table))})\n"
        f"_DRILLS_GRADS_{function} = _drills_json.loads({json.dumps(json.dumps(grads))})\n"
        f"_drills_reference_{function} = {function}\n\n\n"
        f"def {function}(*args, **kwargs):\n"
        f"    return _drills_play(\n"
        f"        _DRILLS_TABLE_{function}, {function!r}, args, kwargs, _drills_reference_{function},\n"
        f"        _DRILLS_GRADS_{function}, {codec.GRADIENT_SEED},\n"
        f"    )\n"
    )


def _solution_cells(nb) -> dict[str, str]:
    out = {}
    for c in nb.cells:
        m = c.get("metadata", {}).get("nbgrader", {})
        if c.get("cell_type") == "code" and m.get("solution"):
            out[m["grade_id"]] = c.source
    return out


def learner_notebooks(
    assignment: str,
    exercise: Path | None = None,
    student: str | None = None,
    slim: bool = False,
    kinds: tuple[str, ...] | None = None,
) -> dict[str, nbformat.NotebookNode]:
    """Submissions for ``assignment``: "solution", "stub", and "mistakes-K" carrying the K-th
    catalogued mistake of every function that has one (the others as in the solution).

    ``exercise`` is the student version to start from (default: exercises/ of the repo;
    a course made by make_course has its own under ``course/exercises/``). Mistakes are
    replayed on the generated inputs of ``student``, by default of the student named like
    the notebook ("mistakes-K"). ``slim``: see learner_notebook. ``kinds``: only these (each
    mistakes-K notebook costs the outcomes of K's mistakes to build).
    """
    from autograder import assignments

    if kinds is None:
        most = max((len(f.mistakes) for f in assignments.get(assignment).functions), default=0)
        kinds = ("solution", "stub", *(f"mistakes-{k + 1}" for k in range(most)))
    return {
        kind: learner_notebook(
            assignment, kind, kind if student is None else student, exercise, slim=slim
        )
        for kind in kinds
    }


def learner_notebook(
    assignment: str,
    kind: str,
    student: str | None,
    exercise: Path | None = None,
    secret: str | None = None,
    slim: bool = False,
) -> nbformat.NotebookNode:
    """One learner notebook of ``kind`` ("solution", "stub" or "mistakes-K", see
    learner_notebooks); a mistakes-K notebook replays ``student``'s generated inputs
    under ``secret`` (default: the secret in force).

    ``slim``: only the cells nbgrader knows (setup, solution and hidden-test cells, any
    other cell with nbgrader metadata); the story, self-checks and exploration are left out,
    as a learner may delete them. Neither engine grades them: the points are the same."""
    from autograder import assignments
    from autograder.notebooks import notebook

    path = exercise or notebook.release_path(assignment, REPO)
    stub = nbformat.read(str(path), as_version=4)
    if slim:
        stub = copy.deepcopy(stub)
        stub.cells = [c for c in stub.cells if c.get("metadata", {}).get("nbgrader")]
    if kind == "stub":
        return stub
    source = nbformat.read(str(notebook.source_path(assignment, REPO)), as_version=4)
    ref_cells = _solution_cells(source)

    def cell_of(fn: str) -> str:
        if fn in ref_cells:
            return fn
        for gid, src in ref_cells.items():
            if re.search(rf"^def {re.escape(fn)}\(", src, re.M):
                return gid
        raise KeyError(f"{assignment}: no solution cell defines {fn}")

    replace: dict[str, str] = {}
    if kind.startswith("mistakes-"):
        k = int(kind.split("-")[1]) - 1
        for f in assignments.get(assignment).functions:
            if k < len(f.mistakes):
                gid = cell_of(f.name)
                base = replace.get(gid, ref_cells[gid])
                replace[gid] = replay_source(
                    assignment, f.name, f.mistakes[k].id, base, student, secret
                )
    elif kind != "solution":
        raise ValueError(f"unknown kind of learner notebook {kind!r}")
    nb = copy.deepcopy(stub)
    for c in nb.cells:
        m = c.get("metadata", {}).get("nbgrader", {})
        if c.get("cell_type") == "code" and m.get("solution"):
            c.source = replace.get(m["grade_id"], _strip_markers(ref_cells[m["grade_id"]]))
    return nb


def kernel_namespace(assignment: str, nb, module_name: str) -> dict:
    """The namespace the in-kernel engine grades in: the source notebook's setup cells, then
    every solution cell of ``nb`` (a learner notebook), executed as a module named
    ``module_name`` (registered in sys.modules, as a kernel's __main__ is importable)."""
    import sys
    import types

    from autograder.notebooks import notebook

    src = notebook.read(notebook.source_path(assignment))
    mod = types.ModuleType(module_name)
    ns = mod.__dict__
    sys.modules[module_name] = mod
    for _, _, s in notebook.code_cells(src, {"setup"}):
        exec(s, ns)  # noqa: S102 (trusted: source notebook)
    for c in nb.cells:
        if c.get("cell_type") == "code" and c.get("metadata", {}).get("nbgrader", {}).get(
            "solution"
        ):
            exec(c.source, ns)  # noqa: S102 (the learner notebook a test built)
    return ns


# the symmetric divergence as a learner's cell: the notebook's own helper, then JS
JS_CELL = """
def forward_kl(policy, reference):
    _check_distributions(policy, reference, True)
    p = [float(x) for x in policy]
    q = [float(x) for x in reference]
    m = [(a + b) / 2 for a, b in zip(p, q)]

    def kl(a, b):
        return math.fsum(x * math.log(x / y) for x, y in zip(a, b) if x > 0)

    return 0.5 * kl(p, m) + 0.5 * kl(q, m)
"""


def symmetric_kl_notebook(folder) -> Path:
    """01's solution with forward_kl replaced by the symmetric divergence (a learner's file:
    every check of the formula fails, and the KL's asymmetry, a probe's relation, is what it
    breaks)."""
    from autograder.cases import seeds

    nb = learner_notebook("01_exact_kl", "solution", None, secret=seeds.PUBLIC_DEFAULT_SECRET)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "def forward_kl" in c.source)
    cell.source = "import math\n" + JS_CELL
    path = Path(folder) / "01_exact_kl-symmetric-kl.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path
