"""Does Binder's recipe alone give a working environment?

A new virtual environment, built from binder/requirements.txt and nothing else
(not pyproject's dev extras, not this test run's .venv), in a copy of the
repository's files as a fresh clone would have them. It must import every
module the notebooks and the grader use, execute notebook 01's solution top to
bottom with no error, and grade it with `drills check` at full marks.

torch: binder/requirements.txt pins the CPU build and points pip at the PyTorch
CPU wheel index, which this machine cannot reach. So this test first installs
torch==2.13.0 the way this machine provides it (a CPU wheel on local disk, found
through pip's configuration), then installs binder/requirements.txt with the
index line left out; the pinned torch is then already satisfied. Everything
else comes from the package index as on Binder. Nothing is written into the
repository: the venv, the copy and the outputs live in pytest's temp dir.

The venv costs about 100 s of CPU (pip resolving and unpacking some 80 packages), so it is a
sweep (DRILLS_BINDER_VENV=1 or DRILLS_SWEEP=1, `make sweep`). `make test` runs the static half
of the same promise: every third-party module that the grader, the tiny model and the
notebooks import belongs to a distribution that the recipe's requirements pull in (their
dependency closure, read from this environment's installed metadata). What only the venv
catches: a package whose metadata declares a dependency it does not really need, pip failing
to resolve the recipe, or notebook 01 failing in an environment made from nothing else.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import nbformat
import pytest
from conftest import sweep
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "binder" / "requirements.txt"
TORCH_HERE = "torch==2.13.0"


# Every module the notebooks, the grader and the tiny model import.
IMPORTS = [
    "autograder",
    "autograder.cli",
    "autograder.widgets",
    "tiny_model",
    "torch",
    "numpy",
    "matplotlib.pyplot",
    "ipywidgets",
    "nbformat",
    "nbclient",
    "nbgrader",
    "jupyterlab",
    "ipykernel",
    "tqdm",
]

RUN_NOTEBOOK = r"""
import json, sys
from pathlib import Path
import nbformat
from nbclient import NotebookClient

path = Path(sys.argv[1])
nb = nbformat.read(path, as_version=4)
nb.cells.append(nbformat.v4.new_code_cell("import sys; print('KERNEL', sys.executable)"))
NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
errors = [o.get("ename") for c in nb.cells if c.cell_type == "code"
          for o in c.get("outputs", []) if o.get("output_type") == "error"]
kernel = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("output_type") == "stream")
print(json.dumps({"errors": errors, "kernel": kernel.split("KERNEL", 1)[-1].strip()}))
"""


def _repo_files() -> list[str]:
    """The files a fresh clone would have: tracked plus untracked-but-not-ignored."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


# Every step's time-out guards against a hang only, never measures: under `make test` beside
# other work (load 6-17 on 2 cores) notebook 01's run in the new venv overran 300 s.
STEP_TIMEOUT_S = 900


def _run(cmd, env, cwd, timeout=STEP_TIMEOUT_S) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc


def _imported_modules() -> dict[str, str]:
    """Top-level module -> a file that imports it, over the grader, the tiny model and the code
    cells of every solution and exercise notebook (imports inside functions included)."""
    sources = [
        (p, p.read_text()) for d in ("autograder", "tiny_model") for p in (ROOT / d).rglob("*.py")
    ]
    for kind in ("solutions", "exercises"):
        for p in sorted((ROOT / kind).glob("*/*.ipynb")):
            nb = nbformat.read(str(p), as_version=4)
            for c in nb.cells:
                if c.cell_type == "code":
                    # IPython magics and shell escapes are not Python
                    code = "\n".join(
                        "" if re.match(r"\s*[%!]", line) else line for line in c.source.splitlines()
                    )
                    sources.append((p, code))
    found: dict[str, str] = {}
    for path, code in sources:
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def _closure(requirements: list[str]) -> set[str]:
    """The canonical names of the distributions ``requirements`` install, transitively, as this
    environment's installed metadata declares them (markers evaluated here, no extras)."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        for dep in metadata.requires(req.name) or []:
            d = Requirement(dep)
            if d.marker is None or d.marker.evaluate({"extra": ""}):
                todo.append(d)
    return seen


def test_every_module_the_code_imports_comes_with_binders_requirements():
    """Catches a grader, tiny-model or notebook import of a package that only the dev extras
    (or a hand install) provide: on Binder, where only binder/requirements.txt is installed, it
    would fail with ModuleNotFoundError. The recipe's `-e .` stands for the project's own
    runtime dependencies."""
    lines = [x.split("#")[0].strip() for x in REQUIREMENTS.read_text().splitlines()]
    reqs = [x for x in lines if x and not x.startswith("-")]
    assert "-e ." in lines, "binder/requirements.txt no longer installs the project"
    reqs += ["reward-drills"]  # what `-e .` installs, with its runtime dependencies
    # the local version label (+cpu) says which wheel, not which distribution
    reqs = [re.sub(r"\+\w+$", "", r) for r in reqs]
    provided = _closure(reqs)
    owners = metadata.packages_distributions()
    local = {"autograder", "tiny_model"}
    missing = {}
    for module, where in sorted(_imported_modules().items()):
        if module in sys.stdlib_module_names or module in local or module == "__future__":
            continue
        dists = {canonicalize_name(d) for d in owners.get(module, [])}
        if not dists & provided:
            missing[module] = (where, sorted(dists) or "not installed here")
    assert missing == {}, f"imported but not installed by binder/requirements.txt: {missing}"


@pytest.mark.slow
@pytest.mark.skipif(
    not sweep("DRILLS_BINDER_VENV"),
    reason="the Binder venv (about 100 s of CPU) runs in the sweep: DRILLS_BINDER_VENV=1 or "
    "make sweep; test_every_module_the_code_imports_comes_with_binders_requirements checks "
    "the recipe's dependency closure",
)
def test_binder_requirements_alone_run_notebook_01(tmp_path):
    """Does `pip install -r binder/requirements.txt` in a new venv give everything notebook 01 and
    `drills check` need (no missing dependency hidden by the dev environment)?"""
    repo = tmp_path / "repo"
    for rel in _repo_files():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, repo / rel)
    assert (repo / "binder" / "requirements.txt").is_file()

    venv = tmp_path / "venv"
    base_python = getattr(sys, "_base_executable", None) or shutil.which("python3")
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True, timeout=120)
    bin_dir = venv / "bin"
    env = {
        k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    }
    # This venv's bin/ only: the test run's .venv must not leak in (nbgrader runs `alembic` by name).
    path = [
        p
        for p in env.get("PATH", "").split(os.pathsep)
        if Path(p).resolve() != Path(sys.executable).parent.resolve()
    ]
    env.update(
        PATH=os.pathsep.join([str(bin_dir), *path]),
        VIRTUAL_ENV=str(venv),
        MPLBACKEND="Agg",
        JUPYTER_DATA_DIR=str(tmp_path / "jupyter-data"),
        JUPYTER_CONFIG_DIR=str(tmp_path / "jupyter-config"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "jupyter-runtime"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    env.pop("DRILLS_COURSE_ROOT", None)
    py = str(bin_dir / "python")

    # torch as this machine provides it (see the module docstring), then the recipe itself.
    # --no-compile: pip would byte-compile every installed module (all of torch and
    # JupyterLab); Python compiles the ones the test imports when it imports them, which is
    # all the environment needs. What gets installed, and from where, is unchanged.
    pip = [py, "-m", "pip", "install", "--quiet", "--no-compile"]
    _run([*pip, TORCH_HERE], env, repo)
    offline = tmp_path / "requirements-here.txt"
    lines = REQUIREMENTS.read_text().splitlines()
    offline.write_text(
        "\n".join(
            x for x in lines if not x.strip().startswith(("--extra-index-url", "--index-url"))
        )
        + "\n"
    )
    dropped = [x for x in lines if x.strip().startswith("--")]
    assert dropped == ["--extra-index-url https://download.pytorch.org/whl/cpu"], dropped
    _run([*pip, "-r", str(offline)], env, repo)

    # Everything imports, from the fresh venv and the copied repository.
    code = "import importlib, json; import autograder\n" + "".join(
        f"importlib.import_module({m!r})\n" for m in IMPORTS
    )
    code += "print(json.dumps({'autograder': autograder.__file__}))"
    where = json.loads(_run([py, "-c", code], env, repo).stdout.strip().splitlines()[-1])
    assert Path(where["autograder"]).resolve().is_relative_to(repo.resolve()), where
    torch_version = _run(
        [py, "-c", "import torch; print(torch.__version__)"], env, repo
    ).stdout.strip()
    assert torch_version.startswith("2.13.0"), torch_version

    # Notebook 01's solution, top to bottom, in a kernel of the fresh venv.
    nb = repo / "solutions" / "01_exact_kl" / "01_exact_kl.ipynb"
    driver = tmp_path / "run_notebook.py"
    driver.write_text(RUN_NOTEBOOK)
    result = json.loads(_run([py, str(driver), str(nb)], env, repo).stdout.strip().splitlines()[-1])
    assert result["errors"] == [], result
    assert Path(result["kernel"]).parent.resolve() == bin_dir.resolve(), result

    # The learner's check (the engine behind "Check my work") works there too: full marks.
    check = subprocess.run(
        [str(bin_dir / "drills"), "check", str(nb), "--json"],
        env=env,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT_S,
    )
    report = json.loads(check.stdout)
    assert check.returncode == 0 and report["score"] == report["max_score"] > 0, (
        check.stdout[-2000:],
        check.stderr[-2000:],
    )
