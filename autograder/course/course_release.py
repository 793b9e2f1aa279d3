"""`drills release --course OUT`: what a graded class receives, without the answer key.

The repository is the full form: the solution notebooks, the case modules (whose mistake
formulas rebuild the references) and tiny_model's training maths, for self-learners and for
the instructor's grade. A graded class gets the course form, built here from the full form:

    OUT/exercises/<id>/<id>.ipynb   the released notebooks (exercises/, up to date with solutions/)
    OUT/dist/<wheel>                this package built with the standard tooling (pip wheel, from
                                    a generated project tree) without solutions/, the case
                                    modules, the authoring tools or tiny_model, and with one
                                    values bundle per notebook as package data
                                    (notebooks.course_values: Check my work grades against it)
    OUT/COURSE.md                   what the folder holds and how to install it

Everything it writes is scanned for answer keys before the command succeeds: the exercises and
every Python file of the wheel by behaviour (course.answer_key: every function run on every
graded function's cases), the wheel also by name (no function of a graded function's name, no
file of solutions/, a case module or tiny_model/reference.py). A finding fails the command.

05-07's notebooks train the tiny model in their live cells: where the course form holds one of
them, the wheel carries tiny_model (its code, the warm checkpoints and the shipped results)
without tiny_model/reference.py, the one module of tiny_model that implements graded
functions (seam.py); their live cells run on the learner's own functions (tiny_model.live).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.cases import seeds
from autograder.notebooks import course_values, notebook
from autograder.scoring import cache, memo, served

SUPPORTED = notebook.ASSIGNMENTS
NOT_CHOSEN = (
    "the instructor did not put it in this course form (`drills release --course OUT "
    "ASSIGNMENT...` names the notebooks it holds)"
)
NEEDS_TINY_MODEL = ("05_grpo_lld", "06_nthr", "07_beyond_nthr")
# Files of tiny_model/ the course form leaves out: its reference implementations of graded
# functions (the rest calls them through the seam, or the learner's own).
TINY_LEFT_OUT = ("reference.py",)
TINY_DATA = ("checkpoints/*.pt", "results/*.json")  # the warm models, the shipped results
MARKER = ".drills-course"  # in OUT: a folder this command made (and may replace)
PACKAGE = Path(__file__).resolve().parents[1]  # autograder/
TINY_MODEL = PACKAGE.parent / "tiny_model"
# Files of autograder/ the course form leaves out: the case modules (references rebuilt by
# their mistake formulas), their shared helpers and the authoring tools built on them.
LEFT_OUT = (
    "assignments/a0*.py",
    "assignments/common.py",
    "assignments/properties.py",
    "assignments/catalogue.py",
    "assignments/equivalent_mutants.json",
    "scaffold.py",
    "author_check.py",
    "course_values",
)
DEPENDENCIES = [  # the repository's, less torch, nbgrader and nbclient (not used by a check)
    "numpy>=1.24",
    "nbformat>=5.9",
    "fastjsonschema>=2.15",  # notebooks.nbjson validates with it (nbformat brings it too)
    "matplotlib>=3.7",
    "ipywidgets>=8",
    "jupyterlab>=4",
    "ipykernel>=6",
    "tqdm>=4.60",
    "jsonschema>=4.18,<4.25",
]


class CourseReleaseError(RuntimeError):
    """The course form cannot be built, in a sentence."""


@dataclass
class CourseBuild:
    out: Path
    assignments: list[str]
    wheel: Path
    bundles: dict[str, str] = field(default_factory=dict)  # assignment -> fingerprint
    findings: list[str] = field(default_factory=list)  # answer keys found (the build failed)


# -- the values -------------------------------------------------------------------------------


def outline_notebook(assignment: str, root: Path | None = None) -> dict:
    """The source notebook's outline: setup cells as they are, each solution cell (and a cell
    a notebook asks the learner to bring from another: ``drills.graded_in``) as the signatures
    of its functions (course_values.outline_cell), test cells as they are; nothing else."""
    cells = []
    for cell in notebook.read(notebook.source_path(assignment, root)).cells:
        if cell.get("cell_type") != "code":
            continue
        role = notebook.cell_role(cell)
        meta = cell.get("metadata", {})
        brought = isinstance(meta.get("drills"), dict) and meta["drills"].get("graded_in")
        if role not in ("setup", "solution", "test") and not brought:
            continue
        text = cell.source if role in ("setup", "test") else course_values.outline_cell(cell.source)
        kept = {k: json.loads(json.dumps(meta[k])) for k in ("nbgrader", "drills") if k in meta}
        cells.append(
            {
                "cell_type": "code",
                "execution_count": None,
                "metadata": kept,
                "outputs": [],
                "source": text,
            }
        )
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def bundle_body(assignment: str, root: Path | None = None) -> dict:
    """``assignment``'s values on the public draw, computed by the full form (the reference and
    every catalogued mistake, through the outcome cache): the body of its values bundle."""
    secret = seeds.PUBLIC_DEFAULT_SECRET
    out = memo.assignment_outcomes(assignment, secret, None, root)
    specs = {n: cache.spec_outline(out.specs[n]) for n in out.names}
    return {
        "assignment": assignment,
        "draw": course_values.PUBLIC_DRAW,
        "made_from": {
            "source": cache.file_digest(notebook.source_path(assignment, root)),
            "code": cache.code_digest(assignment),
            "libraries": cache.library_versions(),
        },
        "names": list(out.names),
        "points": {n: out.points[n] for n in out.names},
        "specs": specs,
        "inputs": {n: out.inputs[n] for n in out.names},
        "expected": {n: out.expected[n] for n in out.names},
        "mistakes": {n: {m: list(v) for m, v in out.mutants[n].items()} for n in out.names},
        "probes": {n: list(out.probes.get(n, [])) for n in out.names},
        "served": {
            n: served.served_names(assignment, n, root, graded=list(out.names)) for n in out.names
        },
        "outline": outline_notebook(assignment, root),
    }


def write_values(folder: Path, assignments: list[str], root: Path | None = None) -> dict[str, str]:
    """The values bundles of ``assignments`` and course.json in ``folder``; their fingerprints."""
    folder.mkdir(parents=True, exist_ok=True)
    prints = {}
    for a in assignments:
        body = bundle_body(a, root)
        prints[a] = course_values.fingerprint(body)
        (folder / f"{a}.json").write_bytes(course_values.canonical(course_values.wrap(body)))
    manifest = {
        "assignments": list(assignments),
        "not_included": {a: NOT_CHOSEN for a in notebook.ASSIGNMENTS if a not in assignments},
        "bundles": prints,
        "draw": course_values.PUBLIC_DRAW,
    }
    (folder / course_values.MANIFEST).write_bytes(
        course_values.canonical(course_values.wrap(manifest))
    )
    return prints


# -- the package ------------------------------------------------------------------------------


def _left_out(rel: Path) -> bool:
    return any(rel.match(p) or rel.parts[0] == p for p in LEFT_OUT) or "__pycache__" in rel.parts


def _tiny_left_out(rel: Path) -> bool:
    return rel.as_posix() in TINY_LEFT_OUT or "__pycache__" in rel.parts


def tiny_model_files() -> list[Path]:
    """tiny_model's files the course form ships (relative): its Python files but
    TINY_LEFT_OUT, the warm checkpoints and the shipped results."""
    files = [
        p.relative_to(TINY_MODEL)
        for p in sorted(TINY_MODEL.glob("*.py"))
        if not _tiny_left_out(p.relative_to(TINY_MODEL))
    ]
    for pattern in TINY_DATA:
        files += [p.relative_to(TINY_MODEL) for p in sorted(TINY_MODEL.glob(pattern))]
    return files


def project_tree(into: Path, assignments: list[str], root: Path | None = None) -> dict[str, str]:
    """A project to build the course's wheel from: autograder/ without LEFT_OUT, the values
    bundles as package data, a pyproject.toml; where 05-07 are chosen, tiny_model without
    TINY_LEFT_OUT (and torch a dependency); no notebook. The fingerprints."""
    target = into / "autograder"
    for path in sorted(PACKAGE.rglob("*")):
        rel = path.relative_to(PACKAGE)
        if path.is_dir() or _left_out(rel) or path.suffix not in (".py", ".json", ".seccomp"):
            continue
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / rel)
    tiny = any(a in NEEDS_TINY_MODEL for a in assignments)
    if tiny:
        for rel in tiny_model_files():
            (into / "tiny_model" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(TINY_MODEL / rel, into / "tiny_model" / rel)
    packages = ["autograder", "autograder.*"] + (["tiny_model"] if tiny else [])
    dependencies = DEPENDENCIES + (["torch>=2.1"] if tiny else [])
    data = f"tiny_model = {json.dumps(list(TINY_DATA))}\n" if tiny else ""
    prints = write_values(target / "course_values", assignments, root)
    # the repository's version, and a local label naming these values: a rebuilt course with
    # other values is another version (an image or a laptop upgrades to it)
    label = course_values.fingerprint([prints[a] for a in assignments])[len("sha256:") :][:10]
    version = f"{_version(root)}+values.{label}"
    (into / "pyproject.toml").write_text(
        "[build-system]\n"
        'requires = ["setuptools>=68"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        "[project]\n"
        'name = "reward-drills-course"\n'
        f'version = "{version}"\n'
        'description = "reward-drills for a graded class: Check my work from values, '
        'no answer key"\n'
        'requires-python = ">=3.10"\n'
        'license = { text = "MIT" }\n'
        f"dependencies = {json.dumps(dependencies)}\n\n"
        "[project.scripts]\n"
        'drills = "autograder.cli:main"\n\n'
        "[tool.setuptools.packages.find]\n"
        f"include = {json.dumps(packages)}\n\n"
        "[tool.setuptools.package-data]\n"
        'autograder = ["course_values/*.json"]\n' + data,
        encoding="utf-8",
    )
    return prints


def _version(root: Path | None) -> str:
    """The repository's version (pyproject.toml), for the course's wheel."""
    import re

    try:
        text = ((root or notebook.course_root()) / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return "0.0.0"
    m = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M)
    return m.group(1) if m else "0.0.0"


def build_wheel(project: Path, dist: Path) -> Path:
    """``pip wheel`` of ``project`` into ``dist``, offline (no index, no build isolation: the
    setuptools of this Python builds it)."""
    dist.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="drills-wheel-") as tmp:
        p = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
             "--no-index", "--wheel-dir", tmp, str(project)],
            capture_output=True, text=True, timeout=600,
            env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"),
        )  # fmt: skip
        wheels = sorted(Path(tmp).glob("*.whl"))
        if p.returncode != 0 or len(wheels) != 1:
            raise CourseReleaseError(
                "pip wheel could not build the course's package: "
                + (p.stderr.strip().splitlines() or ["no output"])[-1]
            )
        shutil.copyfile(wheels[0], dist / wheels[0].name)
        return dist / wheels[0].name


# -- the scan ---------------------------------------------------------------------------------


def graded_names(root: Path | None = None) -> dict[str, str]:
    """Every graded function of the full form's notebooks -> its notebook."""
    out = {}
    for a in notebook.available_assignments(root):
        for f in memo.function_specs(a, root):
            out[f] = a
    return out


def names_in_wheel(wheel: Path, root: Path | None = None) -> list[str]:
    """The wheel by name: a file of solutions/, a case module or tiny_model/reference.py, or a
    Python file that defines a function named as a graded function of the course."""
    graded = graded_names(root)
    found = []
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            rel = Path(name)
            if (
                rel.parts[0] == "solutions"
                or (rel.parts[0] == "tiny_model" and _tiny_left_out(Path(*rel.parts[1:])))
            ) or (
                rel.parts[0] == "autograder"
                and _left_out(Path(*rel.parts[1:]))
                and "course_values" not in rel.parts
            ):
                found.append(f"{wheel.name}: holds {name}, which the course form leaves out")
            if rel.suffix != ".py":
                continue
            try:
                tree = ast.parse(z.read(name).decode("utf-8"))
            except (SyntaxError, UnicodeDecodeError):
                found.append(f"{wheel.name}: {name} cannot be read as Python")
                continue
            for node in ast.walk(tree):
                if (
                    isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and node.name in graded
                ):
                    found.append(
                        f"{wheel.name}: {name} defines `{node.name}` (line {node.lineno}), the "
                        f"name of {graded[node.name]}'s graded function"
                    )
    return found


# Modules of the package the behaviour scan does not run (they are scanned by name): their
# functions fork, replace or end the calling process or wait on children (a zygote's loop
# exits the scan itself; a sandbox's start waits for a child that never comes). They hold the
# engine's process control, no maths. A path ending in "/" is a whole package.
# tiny_model's command line parses its argument as a command line and may start a training.
NOT_RUN = ("autograder/engine/sandbox/", "autograder/engine/zygote.py", "tiny_model/__main__.py")


def _not_run(rel: str) -> bool:
    return any(rel == n or (n.endswith("/") and rel.startswith(n)) for n in NOT_RUN)


def behaviour_in_files(files: list[Path], timeout: float = 900) -> list[str]:
    """course.answer_key's scan by behaviour of Python files (their functions run on every
    graded function's cases), in a child process: a function that reads stdin, exits or
    writes files does so there, with no input, in a scratch folder."""
    with tempfile.TemporaryDirectory(prefix="drills-scan-") as tmp:
        env = dict(os.environ, HOME=tmp, DRILLS_CACHE_DIR=str(Path(tmp) / "cache"))
        report = Path(tmp) / "findings.json"
        env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE.parent), env.get("PYTHONPATH", "")])
        try:
            p = subprocess.run(
                [sys.executable, "-m", "autograder.course.answer_key", str(report), *map(str, files)],
                capture_output=True, text=True, timeout=timeout, cwd=tmp, env=env,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return [f"the scan of the package's files did not finish in {timeout:g} s"]
        try:
            return list(json.loads(report.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
            return [f"the scan of the package's files failed (exit {p.returncode}: {tail})"]


def scan(out: Path, wheel: Path, root: Path | None = None) -> list[str]:
    """Every answer key in the course form at ``out``: its exercises and the outline notebooks
    of its values bundles by behaviour (against every notebook of the course), its wheel by
    name and by behaviour."""
    from autograder.course import answer_key

    found = names_in_wheel(wheel, root)
    with tempfile.TemporaryDirectory(prefix="drills-unpacked-") as tmp:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp)
        outlines = []  # each bundle's outline (setup cells, signatures), read as a notebook
        for bundle in sorted(Path(tmp).glob("autograder/course_values/*.json")):
            body = json.loads(bundle.read_text(encoding="utf-8"))["body"]
            if "outline" in body:
                outlines.append(Path(tmp) / f"outline of {bundle.stem}.ipynb")
                outlines[-1].write_text(json.dumps(body["outline"]), encoding="utf-8")
        released = sorted((out / "exercises").glob("*/*.ipynb")) + outlines
        found = [str(f) for f in answer_key.scan(released)] + found
        files = [
            f
            for f in sorted(Path(tmp).rglob("*.py"))
            if not _not_run(f.relative_to(tmp).as_posix())
        ]
        found += [f.replace(tmp + os.sep, "").replace(tmp, "") for f in behaviour_in_files(files)]
    return found


# -- the command ------------------------------------------------------------------------------


def build(
    out: Path,
    assignments: list[str] | None = None,
    root: Path | None = None,
    check_stale: bool = True,
) -> CourseBuild:
    """The course form of ``assignments`` (default: every one it supports) in ``out``.
    ``check_stale``: first check that exercises/ is up to date with solutions/ (nbgrader's
    generation; a test whose neighbours check that already may leave it out)."""
    if course_values.active():
        raise CourseReleaseError(
            "this is the course form already: build the course form from the repository"
        )
    root = root or notebook.course_root()
    chosen = list(assignments or SUPPORTED)
    unknown = [a for a in chosen if a not in notebook.ASSIGNMENTS]
    if unknown:
        raise CourseReleaseError(f"unknown assignment(s) {', '.join(unknown)}")
    chosen = [a for a in notebook.ASSIGNMENTS if a in chosen]
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise CourseReleaseError(
            f"{out} exists and is not empty (nor a course form this command made): give a new "
            "or empty folder"
        )
    from autograder.notebooks.release import release

    stale = release(chosen, root, check=True) if check_stale else None
    if stale:
        raise CourseReleaseError(
            "exercises/ is stale (run `drills release` first):\n" + stale.summary()
        )
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("made by `drills release --course`; replaced by the next one\n")
    for a in chosen:
        shutil.copytree(root / "exercises" / a, out / "exercises" / a)
    with tempfile.TemporaryDirectory(prefix="drills-course-project-") as tmp:
        prints = project_tree(Path(tmp), chosen, root)
        wheel = build_wheel(Path(tmp), out / "dist")
    (out / "COURSE.md").write_text(_readme(chosen, wheel, prints), encoding="utf-8")
    result = CourseBuild(out, chosen, wheel, prints)
    result.findings = scan(out, wheel, root)
    return result


def _readme(chosen: list[str], wheel: Path, prints: dict[str, str]) -> str:
    lines = [
        "# The course form of reward-drills",
        "",
        "What students of a graded class receive: no solution, no case module, no reference.",
        "",
        f"- `dist/{wheel.name}`: `pip install dist/{wheel.name}` (a JupyterHub image, a "
        "student's laptop); `drills check NOTEBOOK` and the notebooks' Check my work grade "
        "against the values it carries (the public draw), not against a reference.",
        "- `exercises/`: the released notebooks, for the nbgrader exchange or the students' "
        "home folders.",
        "",
        "Grades come from the instructor's full form (the repository): `drills grade` with "
        'the course secret. docs/instructors.md, "The course form".',
        "",
        "Values bundles (fingerprints):",
        "",
        *[f"- {a}: `{prints[a]}`" for a in chosen],
        "",
    ]
    return "\n".join(lines)
