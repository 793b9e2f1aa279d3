"""Check my work in JupyterLab, in the course form: a graded class's view, in a real browser.

The course form (`drills release --course OUT`) built in a scratch folder; JupyterLab started on
a learner's folder that holds only solved notebooks in nbgrader's layout (`<id>/<id>.ipynb`,
the released exercises with the solutions pasted in), its kernels given only the course form's
package (the wheel unpacked first on their path: no solutions/, no case module, no
tiny_model.reference). Each notebook is run to the end in headless Chromium, saved, and
checked with its "Check my work" button: no cell errs, 05's and 07's live cells ran on the
learner's functions (no "cannot yet"), and the score equals the full form's `drills check` of
the same saved file on the public draw. 01's first catalogued mistake too, where the mistake
named must be the full form's.

`make test` runs 01 and 05 (conftest.BROWSER_SLICE); DRILLS_BROWSER_ALL=1 (or the sweep) adds
07 (its live training, about a minute). Needs what tests/test_browser.py needs; skips as it does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import course_isolation
import pytest
import test_browser as tb
from conftest import CHROMIUM, browser_notebook, browser_skip_reason
from nbgrader_course import learner_notebook

from autograder.cases import seeds
from autograder.course import course_release, grade_cli

pytestmark = pytest.mark.slow
SKIP = browser_skip_reason()
if SKIP:
    pytestmark = [pytest.mark.slow, pytest.mark.skip(reason=SKIP)]

# 07's live cells take 05's and 06's functions from the learner's own notebooks beside it
IN_FOLDER = ("01_exact_kl", "05_grpo_lld", "06_nthr", "07_beyond_nthr")
CHECKED = [a for a in ("01_exact_kl", "05_grpo_lld", "07_beyond_nthr") if browser_notebook(a)]
NOTEBOOK_TIMEOUT_S = 300  # 07's live training run is in it


def _as_learner() -> bool:
    """JupyterLab runs as the unprivileged user where this machine can (root, runuser): a
    learner's server is never root's. Elsewhere it runs as whoever runs the tests."""
    import unprivileged

    return unprivileged.why_not_as_user() is None


@pytest.fixture(scope="module")
def course_lab(tmp_path_factory):
    """JupyterLab on a learner's folder of solved notebooks, kernels on the course form only;
    as the unprivileged user where the machine allows it (a folder of their own, a Python and
    the dependencies they can read, the wheel unpacked first on the path)."""
    import shutil
    import tempfile

    import unprivileged

    as_learner = _as_learner()
    tmp = Path(tempfile.mkdtemp(prefix="drills-course-lab-")) if as_learner else tmp_path_factory.mktemp("course-lab")  # fmt: skip
    built = course_release.build(tmp / "out", list(IN_FOLDER), check_stale=False)
    assert built.findings == []
    unpacked = tmp / "unpacked"
    with zipfile.ZipFile(built.wheel) as z:
        z.extractall(unpacked)
    root = tmp / "home"
    for a in IN_FOLDER:
        (root / a).mkdir(parents=True)
        nb = learner_notebook(a, "solution", None, secret=seeds.PUBLIC_DEFAULT_SECRET)
        (root / a / f"{a}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    (root / "mistake" / "01_exact_kl").mkdir(parents=True)
    nb = learner_notebook("01_exact_kl", "mistakes-1", None, secret=seeds.PUBLIC_DEFAULT_SECRET)
    (root / "mistake" / "01_exact_kl" / "01_exact_kl.ipynb").write_text(json.dumps(nb))
    tb._write_settings(tmp / "settings")
    common = dict(
        HOME=str(tmp),
        DRILLS_CACHE_DIR=str(tmp / "cache"),
        JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
        JUPYTER_CONFIG_DIR=str(tmp / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
    )
    port, token = tb._free_port(), "course-lab-" + os.urandom(8).hex()
    lab_args = ["--no-browser", "--ip=127.0.0.1", f"--port={port}",
                f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
                "--LabApp.expose_app_in_browser=True"]  # fmt: skip
    if as_learner:
        unprivileged.ensure_user()
        tmp.chmod(0o755)
        exe = unprivileged.readable_python(tmp)
        packages = unprivileged.readable_packages(tmp)
        # the front-end extensions (the Check my work widget's) live in the venv's share/jupyter,
        # which a base Python does not search: on JUPYTER_PATH, or a copy the user can read
        data = Path(sys.prefix) / "share" / "jupyter"
        if not unprivileged.user_can_read(data / "labextensions"):
            unprivileged.link_copy(data, tmp / "share-jupyter")
            data = tmp / "share-jupyter"
        subprocess.run(["chown", "-R", f"{unprivileged.USER}:", str(tmp)], check=True)
        env = {
            **common,
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            # the course form's package first, then the dependencies (a plain path entry: their
            # .pth files, the project's editable install among them, are not read)
            "PYTHONPATH": f"{unpacked}{os.pathsep}{packages}",
            "JUPYTER_PATH": str(data),
        }
        cmd = [unprivileged.which("runuser"), "-u", unprivileged.USER, "--", "env", "-i",
               *(f"{k}={v}" for k, v in env.items()), str(exe), "-m", "jupyterlab", *lab_args]  # fmt: skip
        run_env = None
    else:
        run_env = {k: v for k, v in os.environ.items() if not k.startswith(("DRILLS_", "JPY_"))}
        run_env.pop("MPLBACKEND", None)
        run_env.pop("NBGRADER_EXECUTION", None)
        run_env.update(
            common,
            # the course form's package, and nothing of the repository (not even through the
            # editable install's finder: course_isolation)
            PYTHONPATH=course_isolation.pythonpath(tmp, unpacked),
            PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        )
        cmd = [str(Path(sys.executable).parent / "jupyter"), "lab", *lab_args]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
    log = tmp / "jupyter-lab.log"
    with open(log, "w") as logf:
        proc = subprocess.Popen(
            cmd, env=run_env, cwd=tmp, stdout=logf, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    server = tb.Lab(f"http://127.0.0.1:{port}", token, root, proc, log)
    try:
        server.wait_started(90)
        if as_learner:
            import pwd

            uids = subprocess.run(["ps", "-o", "uid=", "--ppid", str(proc.pid)],
                                  capture_output=True, text=True).stdout.split()  # fmt: skip
            want = str(pwd.getpwnam(unprivileged.USER).pw_uid)
            assert uids and set(uids) == {want}, f"the lab runs as uid {uids}, not {want}"
        yield server
    finally:
        try:
            os.killpg(proc.pid, 15)  # the whole session: runuser, the server and its kernels
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
        if as_learner:
            shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def course_page(course_lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=tb.CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        pg = context.new_page()
        try:
            yield pg
        finally:
            browser.close()


def _run_and_check(page, lab, rel: str, past_errors: bool = False) -> tuple[list[dict], str]:
    """Open, run (a mistake's notebook: past its failing self-checks, as a learner would),
    save, press Check my work; the inspected cells and the check's text."""
    sources = tb.code_sources(lab.root / rel)
    with tb.screenshot_on_failure(page, f"course-{rel.replace('/', '-')}"):
        tb.open_notebook(page, lab, rel, len(sources))
        if past_errors:
            tb.run_all_past_errors(page, lab, rel, len(sources), NOTEBOOK_TIMEOUT_S)
        else:
            tb.run_all_cells(page, len(sources), NOTEBOOK_TIMEOUT_S)
        cells = tb.inspect_cells(page, sources)
        tb.save(page)
        text, _ = tb.check_my_work(page)
    return cells, text


def _score(text: str) -> tuple[float, float]:
    m = re.search(r"Score: ([\d.]+) / ([\d.]+) points", text)
    assert m, f"'Check my work' showed no score:\n{text}"
    return float(m.group(1)), float(m.group(2))


@pytest.mark.parametrize("assignment", CHECKED)
def test_check_my_work_in_the_course_form_gives_the_full_forms_score(
    course_lab, course_page, assignment
):
    """The solved notebook runs to the end in JupyterLab on the course form's package without
    an error (05's and 07's live cells on the learner's functions), and Check my work shows the
    full form's score of the saved file: full marks."""
    rel = f"{assignment}/{assignment}.ipynb"
    cells, text = _run_and_check(course_page, course_lab, rel)
    errors = [(i, c["first_line"], c["errors"]) for i, c in enumerate(cells) if c["errors"]]
    assert errors == [], errors
    assert not any("it cannot yet" in c["text"] for c in cells), "a live cell fell back"
    full = grade_cli.check_notebook(course_lab.root / rel, assignment)
    assert full.error is None, full.error
    assert _score(text) == (full.score, full.max_score) and full.score == full.max_score, text


def test_check_my_work_in_the_course_form_names_the_full_forms_mistake(course_lab, course_page):
    """01 with its first catalogued mistakes: the course form's Check my work shows the full
    form's score and, for each function, the full form's feedback heading for the mistake."""
    if "01_exact_kl" not in CHECKED:
        pytest.skip("01 is not among the notebooks checked")
    rel = "mistake/01_exact_kl/01_exact_kl.ipynb"
    _, text = _run_and_check(course_page, course_lab, rel, past_errors=True)
    full = grade_cli.check_notebook(course_lab.root / rel, "01_exact_kl")
    assert _score(text) == (full.score, full.max_score) and full.score < full.max_score, text
    named = [f for f in full.functions if f.mistake]
    assert named, "the full form named no mistake"
    shown = " ".join(text.split())
    for f in named:  # the diagnosis the full form gives, as the button shows it
        first = " ".join(str(f.diagnosis).split())[:60]
        assert first in shown, (f.function, f.mistake, first, text)
