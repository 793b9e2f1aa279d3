"""A Gradescope autograder that runs `drills grade`: the bundle, and what runs inside it.

``drills gradescope-bundle --out autograder.zip [--assignment ID] [--secret-file F]``
writes a zip laid out as Gradescope's autograder specification asks
(https://gradescope-autograders.readthedocs.io/en/latest/specs/, read from a stored
copy of that page; submission metadata from
https://gradescope-autograders.readthedocs.io/en/latest/submission_metadata/):

    setup.sh          run once, as root, when Gradescope builds the image: installs
                      Python, bubblewrap, the CPU build of torch and this project
    run_autograder    run for each submission, with /autograder as working folder
    reward-drills/    the project: pyproject.toml, autograder/, tiny_model/, solutions/ (only
                      the bundled assignment's solution when one is given)
    drills-bundle.json  the assignment, visibility and timeout chosen at bundling
    course.secret     the course secret, when given (students never see the source; mode
                      0600, as the zip itself, which holds every solution)

Gradescope unpacks the zip into ``/autograder/source``, puts the student's files in
``/autograder/submission`` and reads ``/autograder/results/results.json``. The root is
``$AUTOGRADER_ROOT`` when set (a test runs the bundle in a temporary folder laid out
the same way), and ``setup.sh`` uses ``$DRILLS_PYTHON`` instead of installing when it
is set (an interpreter that already has this project installed).

:func:`run` (``python -m autograder.course.exports.gradescope run``) takes the student's notebook,
lays it out as ``submitted/<student>/<assignment>/`` with the student id from
``submission_metadata.json`` (the first user's email; so the hidden inputs are the
student's own, as in ``drills grade``), runs ``drills grade`` on it and writes
results.json: the total as ``score``, one test per graded function (``name``,
``number``, ``score``, ``max_score``, ``visibility``, ``output``: the feedback text,
in which generated cases show pass/fail and their note only), ``visibility``,
``stdout_visibility`` (hidden: run_autograder's log is for the instructor) and
``execution_time``.

When the grader itself fails (``drills grade`` exits non-zero, writes no result, or its result
says the grader failed on the notebook), the student is not given a 0: no results.json is
written and run_autograder exits with status 1, which Gradescope reports as a failed run ("The
autograder failed to execute correctly", returned "when the autograder does not produce a valid
JSON file in /autograder/results/results.json":
https://gradescope-autograders.readthedocs.io/en/latest/troubleshooting/, read from a stored copy
of that page), flagged for the instructor, whose log (results/stdout) says why. A notebook that
is the student's to fix (not found, unreadable, a link) still gets results.json with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

from autograder.cases import seeds
from autograder.course import launch
from autograder.engine import files, submission
from autograder.notebooks import notebook

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
CONFIG = "drills-bundle.json"
PROJECT = "reward-drills"
_EPOCH = (1980, 1, 1, 0, 0, 0)

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SRC="$ROOT/source"
# The course (solutions, case modules, the secret) for root only: where bubblewrap cannot start,
# learner code runs as another uid, which file modes keep out.
chmod -R go-rwx "$SRC"
if [ -n "${DRILLS_PYTHON:-}" ]; then
    # An interpreter that already has reward-drills installed (used by the test suite).
    echo "$DRILLS_PYTHON" > "$SRC/python-path"
    exit 0
fi
apt-get install -y python3 python3-venv python3-pip bubblewrap
# The secret for the grader only (root): learner code runs as other uids where bubblewrap cannot.
if [ -f "$SRC/course.secret" ]; then chmod 600 "$SRC/course.secret"; fi
python3 -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --upgrade pip
# The CPU build of torch: a plain `pip install torch` would fetch a CUDA build of several GB.
"$ROOT/venv/bin/python" -m pip install --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0"
"$ROOT/venv/bin/python" -m pip install "$SRC/reward-drills"
echo "$ROOT/venv/bin/python" > "$SRC/python-path"
# The installed grader (its case modules) and tiny_model (reference maths) for root only too;
# the sandboxed child imports neither.
"$ROOT/venv/bin/python" -c 'import importlib.util, sys
for n in ("autograder", "tiny_model"):
    s = importlib.util.find_spec(n)
    print(*(s.submodule_search_locations if s else []))' | xargs -r chmod -R go-rwx
chmod -R go-rwx "$SRC"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission, from /autograder.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
chmod -R go-rwx "$ROOT/source"  # as setup.sh left it, whatever the image did since
PY="$(cat "$ROOT/source/python-path")"
export DRILLS_COURSE_ROOT="$ROOT/source/reward-drills"
cd "$ROOT"
exec "$PY" -m autograder.course.exports.gradescope run --root "$ROOT"
"""


def _project_files(root: Path, assignment: str | None = None) -> list[tuple[Path, str]]:
    """(file, name in the zip) of what `pip install` and the grader need from the course: with
    ``assignment``, the source notebook of that assignment only (a bundle for one assignment
    carries no other assignment's solution)."""
    files = [(root / "pyproject.toml", "pyproject.toml"), (root / "README.md", "README.md")]
    for pkg in ("autograder", "tiny_model"):
        for p in sorted((root / pkg).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".pt"):
                files.append((p, str(p.relative_to(root))))
    for a in notebook.available_assignments(root):
        if assignment is not None and a != assignment:
            continue
        p = notebook.source_path(a, root)
        files.append((p, str(p.relative_to(root))))
    return [(p, f"{PROJECT}/{name}") for p, name in files]


def _add(z: zipfile.ZipFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = zipfile.ZipInfo(name, date_time=_EPOCH)
    info.external_attr = mode << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, data)


def bundle(
    out: Path,
    assignment: str | None = None,
    secret_file: Path | None = None,
    visibility: str = "visible",
    timeout: float = 30.0,
    root: Path | None = None,
) -> Path:
    """Write the autograder zip to ``out`` (byte-identical for the same inputs)."""
    from autograder import assignments

    root = root or notebook.course_root()
    if assignment is not None and assignment not in assignments.MODULES:
        raise ValueError(f"unknown assignment {assignment!r}")
    if visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITIES)}")
    config = {"assignment": assignment, "visibility": visibility, "timeout": float(timeout)}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    # Private from its first byte: it holds every solution and, when given, the course secret.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an older temporary file keeps its mode through O_CREAT
    with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w") as z:
        _add(z, "setup.sh", SETUP_SH.encode(), 0o755)
        _add(z, "run_autograder", RUN_AUTOGRADER.encode(), 0o755)
        _add(z, CONFIG, (json.dumps(config, indent=1) + "\n").encode())
        if secret_file is not None:
            secret = seeds.course_secret(secret_file=secret_file)
            _add(z, "course.secret", (secret + "\n").encode(), 0o600)
        for path, name in _project_files(root, assignment):
            _add(z, name, path.read_bytes())
    os.replace(tmp, out)
    return out


# -- inside Gradescope -------------------------------------------------------------------------


def _student(root: Path) -> str:
    """The submitting student's id: the first user's email in submission_metadata.json."""
    try:
        meta = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
        user = (meta.get("users") or [{}])[0]
        raw = user.get("email") or user.get("id") or ""
    except (OSError, ValueError, AttributeError):
        raw = ""
    return seeds.student_id(str(raw)) if str(raw).strip() else "submission"


def _notebook(submitted: Path, assignment: str | None) -> tuple[Path | None, str]:
    found = sorted(p for p in submitted.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    # a link is never followed (it could name the course secret or the solutions)
    links = [p for p in found if p.is_symlink()]
    nbs = [p for p in found if p not in links and p.is_file()]
    if not nbs:
        if links:
            return None, (
                f"{links[0].name} is a symbolic link; links are not followed: submit the "
                "notebook file itself."
            )
        return None, "No notebook (.ipynb) was found in your submission."
    if assignment:
        named = [p for p in nbs if p.stem == assignment]
        if named:
            return named[0], ""
    if len(nbs) == 1:
        return nbs[0], ""
    named = [p for p in nbs if p.stem in notebook.ASSIGNMENTS]
    if len(named) == 1:
        return named[0], ""
    return None, (
        "Your submission holds several notebooks ("
        + ", ".join(p.name for p in nbs)
        + "); submit only the assignment's notebook, keeping its file name."
    )


def results_for(item: dict[str, Any] | None, visibility: str, seconds: float, note: str) -> dict:
    """Gradescope's results.json for one `drills grade` result (``item``: a results.jsonl line)."""
    from autograder.course.report import SubmissionResult
    from autograder.scoring.evaluate import feedback_text

    body: dict[str, Any] = {
        "score": 0.0,
        "execution_time": int(round(seconds)),
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": [],
    }
    if item is None:
        body["output"] = note or "Your submission could not be graded."
        return body
    r = SubmissionResult.from_json(item)
    lines = [f"{r.assignment}: {r.score:g} / {r.max_score:g} points"]
    if r.error:
        lines.append(f"This notebook could not be graded: {r.error}")
    lines += [f"Note: {w}" for w in r.warnings]
    if note:
        lines.append(note)
    body["score"] = r.score
    body["output"] = "\n".join(lines)
    for i, f in enumerate(r.functions, 1):
        body["tests"].append(
            {
                "name": f"{f.function} ({r.assignment})",
                "number": str(i),
                "score": f.score,
                "max_score": f.points,
                "visibility": visibility,
                # every failed check; a generated one with its note only, never its values
                "output": feedback_text(f, max_cases=len(f.cases)),
                "tags": [r.assignment],
            }
        )
    return body


class GraderFailed(RuntimeError):
    """The grader itself failed on this submission: a failed run, never a 0 (see the module)."""


# What `drills grade` puts in a result's error when the grader, not the notebook, failed.
_GRADER_FAILURES = ("the grader failed on this submission", "the grader could not write")


def run(root: Path) -> dict:
    """Grade ``root``/submission with `drills grade`; write ``root``/results/results.json.
    GraderFailed (and no results.json) when the grader itself failed."""
    from autograder.course.report import write_atomic

    (root / "results" / "results.json").unlink(missing_ok=True)  # never a stale one
    t0 = time.monotonic()
    source = root / "source"
    config = json.loads((source / CONFIG).read_text(encoding="utf-8"))
    assignment = config.get("assignment")
    student = _student(root)
    nb, note = _notebook(root / "submission", assignment)
    work = root / "drills-work"
    files.remove_tree(work)
    # Private: learner code may run without bubblewrap here (a container without user
    # namespaces), as a separate uid that file modes keep from the secret and from the
    # results derived from it; `drills grade` refuses a secret that such a child could read.
    work.mkdir(mode=0o700, parents=True)
    if (source / "course.secret").is_file():
        os.chmod(source / "course.secret", 0o600)
    item, data = None, None
    if nb is not None:
        a = assignment or (nb.stem if nb.stem in notebook.ASSIGNMENTS else None)
        if a:
            target = work / "submitted" / student / a / f"{a}.ipynb"
        else:  # the assignment is told by the notebook's cells; the file name is the student
            target = work / "submitted" / f"{student}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        try:  # read as drills grade reads a notebook: no link, no device, a size limit
            data = files.read_regular(nb, submission.MAX_NOTEBOOK_BYTES)
        except files.Refused as e:
            data = None
            note = f"Your notebook could not be read: {e}."
        if data is not None:
            target.write_bytes(data)
        cmd = launch.grader_argv("grade", launch.absolute(work / "submitted"))
        cmd += [
            "--out",
            launch.absolute(work / "out"),
            "--jobs",
            "1",
            "--timeout",
            str(config["timeout"]),
        ]
        if assignment:
            cmd += ["--assignment", assignment]
        if (source / "course.secret").is_file():
            cmd += ["--secret-file", launch.absolute(source / "course.secret")]
    if nb is not None and data is not None:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=launch.grader_cwd())
        print(proc.stdout + proc.stderr)  # to /autograder/results/stdout (instructor only)
        lines = work / "out" / "results.jsonl"
        if proc.returncode != 0 or not lines.is_file():
            raise GraderFailed(f"drills grade exited with status {proc.returncode}")
        found = [json.loads(x) for x in lines.read_text(encoding="utf-8").splitlines() if x]
        if not found:
            raise GraderFailed("drills grade wrote no result")
        item = found[0]
        if str(item.get("error") or "").startswith(_GRADER_FAILURES):
            raise GraderFailed(str(item["error"]))
    body = results_for(item, config.get("visibility", "visible"), time.monotonic() - t0, note)
    write_atomic(root / "results" / "results.json", json.dumps(body, indent=1) + "\n")
    return body


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m autograder.course.exports.gradescope")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="grade /autograder/submission (inside Gradescope)")
    r.add_argument("--root", default=os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    args = ap.parse_args(argv)
    try:
        run(Path(args.root))
    except Exception as e:  # noqa: BLE001 (any failure of the grader is a failed run, not a 0)
        (Path(args.root) / "results" / "results.json").unlink(missing_ok=True)
        print(
            f"drills: the grader failed on this submission ({type(e).__name__}: {e}); no "
            "results.json was written, so Gradescope reports a failed run instead of a score"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
