"""`drills gradescope-bundle`: the autograder zip, run the way Gradescope runs it.

The zip is unpacked into a temporary folder laid out as Gradescope's /autograder
(source/, submission/, results/, submission_metadata.json); setup.sh runs with
$DRILLS_PYTHON set to this interpreter (no install from the network), run_autograder is
copied to the root and run from there, as Gradescope's harness does. Its results.json
must have Gradescope's documented fields and the scores `drills grade` gives.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import nbgrader_course
import pytest
from conftest import run_drills

from autograder import assignments
from autograder.cases import seeds

A = "01_exact_kl"
EMAIL = "ada.lovelace@example.edu"
SECRET = "gradescope-secret-77"
VISIBILITY = ("hidden", "after_due_date", "after_published", "visible")

pytestmark = pytest.mark.slow


def _bundle(tmp: Path, secret: Path, *extra: str) -> Path:
    z = tmp / "autograder.zip"
    p = run_drills(
        "gradescope-bundle",
        "--out",
        str(z),
        "--assignment",
        A,
        "--secret-file",
        str(secret),
        *extra,
    )
    assert p.returncode == 0, p.stderr
    return z


def _run_as_gradescope(
    zip_path: Path, root: Path, notebook, prefix=(), python: Path | None = None
) -> dict:
    """``notebook``: a notebook, or the bytes of the file handed in; ``prefix``: a command both
    scripts run under (a container: tests/podman_runtime.py);
    ``python``: the interpreter that has the grader (this one unless given)."""
    for d in ("source", "submission", "results"):
        (root / d).mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(root / "source")
        for info in z.infolist():  # zipfile drops the mode bits Gradescope keeps
            os.chmod(root / "source" / info.filename, info.external_attr >> 16 or 0o644)
    if isinstance(notebook, bytes):  # as handed in, even a file that is not a notebook
        (root / "submission" / "my homework.ipynb").write_bytes(notebook)
    else:
        nbformat.write(notebook, str(root / "submission" / "my homework.ipynb"))
    (root / "submission_metadata.json").write_text(
        json.dumps({"users": [{"email": EMAIL, "id": 4711, "name": "Ada"}]})
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRILLS_")}
    env.update(AUTOGRADER_ROOT=str(root), DRILLS_PYTHON=str(python or sys.executable))
    setup = subprocess.run(
        [*prefix, "bash", str(root / "source" / "setup.sh")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert setup.returncode == 0, setup.stderr
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    run = subprocess.run(
        [*prefix, str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    (root / "results" / "stdout").write_text(run.stdout)  # as Gradescope keeps it
    return json.loads((root / "results" / "results.json").read_text())


def _check_documented_fields(body: dict, visibility: str) -> None:
    """The fields of Gradescope's autograder specification, with their types."""
    assert isinstance(body["score"], (int, float))
    assert isinstance(body["execution_time"], int) and body["execution_time"] >= 0
    assert isinstance(body["output"], str)
    assert body["visibility"] == visibility and body["stdout_visibility"] in VISIBILITY
    assert isinstance(body["tests"], list) and body["tests"]
    for t in body["tests"]:
        assert isinstance(t["name"], str) and t["name"]
        assert isinstance(t["score"], (int, float)) and isinstance(t["max_score"], (int, float))
        assert 0 <= t["score"] <= t["max_score"]
        assert t["visibility"] == visibility and isinstance(t["output"], str)
    assert body["score"] == pytest.approx(sum(t["score"] for t in body["tests"]), abs=0.011)


def _no_generated_values(body: dict) -> None:
    hidden = {c.id for f in assignments.get(A).functions for c in f.cases if c.hidden}
    listed = 0
    for t in body["tests"]:
        lines = t["output"].splitlines() + [""]
        for i, line in enumerate(lines[:-1]):
            case = line.strip()[2:].split(":")[0] if line.strip().startswith("✗") else None
            if case in hidden:
                listed += 1
                assert not lines[i + 1].strip().startswith(("inputs:", "expected:")), t["output"]
    assert listed > 0  # some failed generated case is listed, without its values


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gradescope")
    secret = tmp / "course.secret"
    secret.write_text(SECRET + "\n")
    student = seeds.student_id(EMAIL)
    nbs = {
        kind: nbgrader_course.learner_notebook(A, kind, student, secret=SECRET)
        for kind in ("solution", "mistakes-1")
    }
    plain = _bundle(tmp, secret)
    hidden_zip = tmp / "hidden" / "autograder.zip"
    hidden_zip.parent.mkdir()
    _bundle(tmp / "hidden", secret, "--visibility", "after_due_date")
    bodies = {
        "solution": _run_as_gradescope(plain, tmp / "gs-solution", nbs["solution"]),
        "mistakes-1": _run_as_gradescope(hidden_zip, tmp / "gs-mistake", nbs["mistakes-1"]),
    }
    # drills grade on the same notebooks, as that student, with the same secret
    ours = {}
    for kind, nb in nbs.items():
        folder = tmp / f"drills-{kind}" / "submitted" / student / A
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{A}.ipynb"))
        out = tmp / f"drills-{kind}" / "out"
        p = run_drills(
            "grade", str(folder.parent.parent), "--out", str(out), "--secret-file", str(secret)
        )
        assert p.returncode == 0, p.stderr
        ours[kind] = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    return {"zip": plain, "bodies": bodies, "ours": ours}


def test_bundle_has_gradescopes_two_scripts_at_its_root(graded):
    """setup.sh and run_autograder at the zip's root, executable, and the project inside?"""
    with zipfile.ZipFile(graded["zip"]) as z:
        infos = {i.filename: i for i in z.infolist()}
    for script in ("setup.sh", "run_autograder"):
        assert infos[script].external_attr >> 16 & stat.S_IXUSR
    assert {"reward-drills/pyproject.toml", f"reward-drills/solutions/{A}/{A}.ipynb"} <= set(infos)
    assert "course.secret" in infos
    # a bundle for one assignment carries no other assignment's solution
    solutions = {n for n in infos if n.startswith("reward-drills/solutions/")}
    assert solutions == {f"reward-drills/solutions/{A}/{A}.ipynb"}, solutions


def test_no_other_uid_can_read_the_unpacked_course(graded):
    """Where bubblewrap cannot start, learner code runs as another uid: the unpacked tree was
    0755/0644, so it read the solution notebook and the case modules and forged full marks.
    After setup.sh and a run, does any entry of source/ let group or others in? (Mode bits,
    not a read as another uid: this test's own temporary folder is private, so such a read
    fails whatever source/ holds.)"""
    ran = graded["zip"].parent / "gs-solution" / "source"
    open_to_others = [
        str(p.relative_to(ran))
        for p in [ran, *ran.rglob("*")]
        if not p.is_symlink() and stat.S_IMODE(p.stat().st_mode) & 0o077
    ]
    assert open_to_others == [], open_to_others[:5]
    assert (ran / "reward-drills" / "solutions" / A / f"{A}.ipynb").is_file()


@pytest.mark.parametrize(
    "kind, visibility", [("solution", "visible"), ("mistakes-1", "after_due_date")]
)
def test_results_json_has_the_documented_fields(graded, kind, visibility):
    """Does run_autograder write results.json with Gradescope's fields and types, the
    visibility chosen at bundling on the score and on every test?"""
    _check_documented_fields(graded["bodies"][kind], visibility)


@pytest.mark.parametrize("kind", ["solution", "mistakes-1"])
def test_gradescope_scores_equal_drills_grade(graded, kind):
    """One test per graded function, each with the points `drills grade` gives that student
    (the email of submission_metadata.json seeds the generated cases)?"""
    body, ours = graded["bodies"][kind], graded["ours"][kind]
    got = {t["name"].split(" ")[0]: (t["score"], t["max_score"]) for t in body["tests"]}
    assert got == {f["function"]: (f["score"], f["points"]) for f in ours["functions"]}
    assert body["score"] == ours["score"]
    if kind == "solution":
        assert body["score"] == ours["max_score"] == 7.0
    else:
        assert 0 < body["score"] < 7.0


def test_gradescope_feedback_never_shows_generated_values(graded):
    """In the tests' output (what students read), do failed generated cases show only
    pass/fail and their note?"""
    body = graded["bodies"]["mistakes-1"]
    assert any("✗" in t["output"] for t in body["tests"])
    _no_generated_values(body)


def test_bundle_and_its_secret_are_not_readable_by_other_users(graded):
    """autograder.zip holds every solution and the course secret: was it written 0644, and
    does the secret stay 0600 in the zip, after setup.sh and after a run?"""
    zip_path = graded["zip"]
    assert stat.S_IMODE(zip_path.stat().st_mode) == 0o600
    with zipfile.ZipFile(zip_path) as z:
        assert (z.getinfo("course.secret").external_attr >> 16) & 0o777 == 0o600
    ran = zip_path.parent / "gs-solution"
    assert stat.S_IMODE((ran / "source" / "course.secret").stat().st_mode) == 0o600
    assert stat.S_IMODE((ran / "drills-work").stat().st_mode) == 0o700
