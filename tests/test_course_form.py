"""The course form (`drills release --course OUT`): what a graded class receives.

It holds the released notebooks and a wheel without the answer key (no solutions/, no case
module, no tiny_model/reference.py: tiny_model ships without its reference implementations);
Check my work grades against the values bundles the wheel carries.
These tests build it in a scratch folder and show:

- the answer-key scan (the exercises and every file of the wheel, by name and by behaviour)
  finds nothing in it, and has the power to find a key planted in a wheel or a file;
- Check my work from values gives the full form's scores and mistake names on the public draw,
  for the solution, the stub and every catalogued mistake (graded by the wheel's own code, with
  nothing of the repository importable);
- the wheel installs into a fresh venv as an unprivileged user, offline, and `drills check`
  grades there, outside any checkout.

`make test` builds 01, 05 and 07 (COURSE_FAST) and compares 01's solution, stub and every
catalogued mistake, and 05's and 07's solution, stub and first mistakes (COURSE_SLICE), and
runs 05's live cells there; DRILLS_COURSE_ALL=1 (or DRILLS_SWEEP=1) builds all seven and
compares every catalogued mistake of every notebook; DRILLS_COURSE_LIVE_ALL=1 (or the sweep)
runs 06's and 07's live cells too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import course_isolation
import pytest
from conftest import ROOT, sweep
from nbgrader_course import learner_notebook, symmetric_kl_notebook

from autograder import assignments
from autograder.cases import seeds
from autograder.course import answer_key, course_release, grade_cli
from autograder.notebooks import notebook
from autograder.scoring import evaluate

pytestmark = pytest.mark.slow

COURSE_FAST = ("01_exact_kl", "05_grpo_lld", "07_beyond_nthr")
# make test: every catalogued mistake of 01; of 05 and 07 (torch notebooks, slower to check)
# the solution, the stub and each function's first mistake
COURSE_SLICE = {"05_grpo_lld": 1, "07_beyond_nthr": 1}
ALL = sweep("DRILLS_COURSE_ALL")
# 05's live cells run in make test; DRILLS_COURSE_LIVE_ALL=1 (or the sweep) runs 06's and 07's
# too (each solved, beside the learner's other solved notebooks: about a minute each)
LIVE = ("05_grpo_lld",) + (("06_nthr", "07_beyond_nthr") if sweep("DRILLS_COURSE_LIVE_ALL") else ())
CHOSEN = notebook.ASSIGNMENTS if ALL else tuple(dict.fromkeys(COURSE_FAST + LIVE))
RELEASED = [a for a in CHOSEN if a in course_release.SUPPORTED]


def _kinds(assignment: str) -> list[str]:
    """The solution, the stub, and mistakes-K for every K: together every catalogued mistake
    (outside the sweep, the first COURSE_SLICE[assignment] K only)."""
    most = max(len(f.mistakes) for f in assignments.get(assignment).functions)
    if not ALL and assignment in COURSE_SLICE:
        most = min(most, COURSE_SLICE[assignment])
    return ["solution", "stub", *(f"mistakes-{k + 1}" for k in range(most))]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course form of RELEASED, built by the command's code, and its wheel unpacked."""
    out = tmp_path_factory.mktemp("course") / "out"
    built = course_release.build(out, RELEASED, check_stale=False)  # test_notebooks: in sync
    unpacked = out.parent / "unpacked"
    with zipfile.ZipFile(built.wheel) as z:
        z.extractall(unpacked)
    return built, unpacked


@pytest.fixture(scope="module")
def values_tree(course, tmp_path_factory):
    """The package the checks from values are compared with: the wheel's, or where CHOSEN
    holds a notebook the command does not release yet (the sweep: 05-07), the project tree the
    wheel is built from, with every CHOSEN notebook's bundle."""
    if list(CHOSEN) == RELEASED:
        return course[1]
    tree = tmp_path_factory.mktemp("tree")
    course_release.project_tree(tree, list(CHOSEN))
    return tree


@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    """{(assignment, kind): path} of the learner notebooks compared: mistakes replayed on the
    public draw (no student id: a learner's own check)."""
    folder = tmp_path_factory.mktemp("subs")
    out = {}
    for a in CHOSEN:
        for kind in _kinds(a):
            nb = learner_notebook(a, kind, None, secret=seeds.PUBLIC_DEFAULT_SECRET)
            path = folder / f"{a}-{kind}.ipynb"
            path.write_text(json.dumps(nb), encoding="utf-8")
            out[(a, kind)] = path
    if "01_exact_kl" in CHOSEN:
        # a slip no catalogue names, whose feedback line comes from a probe the values
        # bundle carries (its inputs and the reference's outcome on them)
        out[("01_exact_kl", "symmetric-kl")] = symmetric_kl_notebook(folder)
    return out


def _summary(result: dict) -> dict:
    """What must be equal: the total, and each function's score, first diagnosis and every
    diagnosis's id."""
    return {
        "score": result["score"],
        "functions": [
            [f["function"], f["score"], f.get("mistake"), [d["id"] for d in f["diagnoses"]]]
            for f in result["functions"]
        ],
    }


def _same_but_cuts(full: list[str], course: list[str]) -> bool:
    """Is each course-form text the full form's, but where the full form cut part of a
    learner's message (redact.CUT), which the course form may show (whitespace folded, as a
    cut message is)?"""
    import re

    from autograder.scoring import redact

    if len(full) != len(course):
        return False
    for f, c in zip(full, course):
        f, c = " ".join(f.split()), " ".join(c.split())
        if f == c:
            continue
        if redact.CUT not in f:
            return False
        pattern = ".*?".join(re.escape(part) for part in f.split(redact.CUT))
        if not re.fullmatch(pattern, c, re.S):
            return False
    return True


_DRIVER = """
import json, sys
from pathlib import Path
import autograder
from autograder.course import grade_cli
from autograder.notebooks import course_values
from autograder.scoring import evaluate
g = grade_cli.check_grader()
import importlib.util
from autograder.assignments import MODULES
out = {"package": autograder.__file__, "course_form": course_values.active(), "results": {},
       "case_modules": [m for m in MODULES.values() if importlib.util.find_spec(f"autograder.assignments.{m}")]}
for a, p in json.loads(sys.argv[1]):
    r = grade_cli.check_notebook(Path(p), a, grader=g)
    out["results"][p] = {"score": r.score, "error": r.error, "functions": [f.to_json() for f in r.functions],
                         "text": [evaluate.feedback_text(f) for f in r.functions]}
Path(sys.argv[2]).write_text(json.dumps(out))
"""


def _course_env(unpacked: Path, home: Path) -> dict[str, str]:
    """The venv's Python on the unpacked wheel alone (course_isolation: the checkout's editable
    install would otherwise lend every module the wheel leaves out)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRILLS_")}
    path = course_isolation.pythonpath(home, unpacked)
    env.update(PYTHONPATH=path, HOME=str(home), DRILLS_CACHE="off")
    return env


def test_the_course_environment_reaches_nothing_the_wheel_leaves_out(course, tmp_path):
    """In the environment the course-form tests run their processes in, neither
    tiny_model.reference nor a case module can be imported, while the wheel's own modules can.
    Catches the editable install's finder lending them from the checkout (the tests then pass
    on the answer key they claim is absent)."""
    _, unpacked = course
    probe = (
        "import importlib.util as u, json; print(json.dumps({m: bool(u.find_spec(m)) for m in "
        "('tiny_model.reference', 'autograder.assignments.a01_exact_kl', "
        "'autograder.course_values', 'autograder.selfcheck')}))"
    )
    p = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
        env=_course_env(unpacked, tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    found = json.loads(p.stdout.strip().splitlines()[-1])
    assert found == {
        "tiny_model.reference": False,
        "autograder.assignments.a01_exact_kl": False,
        "autograder.course_values": True,
        "autograder.selfcheck": True,
    }, found


def test_the_course_form_holds_no_answer_key(course):
    """The scan the command runs (the exercises against every notebook's graded functions;
    the wheel by name, and each of its Python files by behaviour): no finding, and the wheel
    holds no solution notebook, case module or tiny_model/reference.py; it holds the rest of
    tiny_model (code, warm checkpoints, shipped results) for 05-07's live cells."""
    built, _ = course
    assert built.findings == []
    names = zipfile.ZipFile(built.wheel).namelist()
    assert not [n for n in names if n.startswith("solutions/")]
    assert "tiny_model/reference.py" not in names
    if any(a in course_release.NEEDS_TINY_MODEL for a in RELEASED):
        want = {f"tiny_model/{r.as_posix()}" for r in course_release.tiny_model_files()}
        assert want <= set(names), sorted(want - set(names))
        assert "tiny_model/seam.py" in want and "tiny_model/results/train_07.json" in want
    assert not [n for n in names if "/assignments/a0" in n or n.endswith("assignments/common.py")]
    assert sorted(n for n in names if "course_values/" in n) == sorted(
        [f"autograder/course_values/{a}.json" for a in RELEASED] + ["autograder/course_values/course.json"]
    )  # fmt: skip


def test_the_scan_finds_a_key_planted_in_a_wheel_or_a_file(tmp_path):
    """The scan's power on what the course form adds: a wheel holding a case module, a
    solution notebook and a function named as a graded one is named three times; a Python
    file holding 03's reference renamed is found by behaviour."""
    wheel = tmp_path / "planted-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("autograder/assignments/a01_exact_kl.py", "SPEC = None\n")
        z.writestr("solutions/01_exact_kl/01_exact_kl.ipynb", "{}")
        z.writestr("autograder/helpers.py", "def forward_kl(p, q):\n    return 0.0\n")
    found = course_release.names_in_wheel(wheel)
    assert len(found) == 3, found
    assert any("defines `forward_kl`" in f for f in found)
    import ast

    code = ast.unparse(notebook.solution_defs("03_sum_vs_mean")["mean_sampled_log_ratio"])
    planted = tmp_path / "helpers.py"
    planted.write_text(
        "from __future__ import annotations\nimport math\n\n"
        + code.replace("def mean_sampled_log_ratio(", "def _average_gap(", 1)
    )
    (f,) = answer_key.scan([], ["03_sum_vs_mean"], files=(planted,))
    assert (f.function, f.graded) == ("_average_gap", "mean_sampled_log_ratio")


def test_the_scan_fails_a_course_form_that_ships_tiny_models_reference(course, tmp_path):
    """The course form's wheel rebuilt with tiny_model/reference.py in it, and again with that
    file's functions renamed into another module (tiny_model/helpers.py): the command's scan
    names the first by its path and its graded names, and finds 07's thr_weights,
    nll_on_correct and smaug_floor in the second by behaviour alone. Catches a scan that
    cannot see tiny_model's answer key, and a LEFT_OUT list that stopped covering it."""
    import re

    built, unpacked = course
    if not any(a in course_release.NEEDS_TINY_MODEL for a in RELEASED):
        pytest.skip("this course form holds no notebook that ships tiny_model")
    code = (ROOT / "tiny_model" / "reference.py").read_text(encoding="utf-8")
    renamed = re.sub(r"^def (\w+)\(", r"def _helper_\1(", code, flags=re.M)
    found = {}
    for name, text in (("reference.py", code), ("helpers.py", renamed)):
        wheel = tmp_path / name / built.wheel.name
        wheel.parent.mkdir()
        with zipfile.ZipFile(built.wheel) as src, zipfile.ZipFile(wheel, "w") as z:
            for item in src.namelist():
                z.writestr(item, src.read(item))
            z.writestr(f"tiny_model/{name}", text)
        found[name] = course_release.scan(built.out, wheel)
    ref = found["reference.py"]
    assert any("holds tiny_model/reference.py" in f for f in ref), ref
    assert any("defines `thr_weights`" in f for f in ref), ref
    helpers = "\n".join(found["helpers.py"])
    assert "reference.py" not in helpers and "defines `" not in helpers, helpers
    for graded in ("thr_weights", "nll_on_correct", "smaug_floor"):
        assert f"`_helper_{graded}`" in helpers and f"`{graded}`" in helpers, (graded, helpers)


def test_check_from_values_equals_the_full_form_on_the_public_draw(
    values_tree, submissions, tmp_path
):
    """Every submission checked twice on the public draw: by the full form (this checkout:
    reference and case modules) and by the course form (the wheel's own code, run with only
    the wheel on its path: Check my work from values). Same total, and per function the same
    score, first mistake named, diagnoses and feedback text, for the solution, the stub and
    every catalogued mistake; each catalogued mistake is named in both."""
    unpacked = values_tree
    grader = grade_cli.check_grader()
    full, texts = {}, {}
    for (a, kind), path in submissions.items():
        r = grade_cli.check_notebook(path, a, grader=grader)
        assert r.error is None, (kind, r.error)
        full[str(path)] = _summary(
            {"score": r.score, "functions": [f.to_json() for f in r.functions]}
        )
        texts[str(path)] = [evaluate.feedback_text(f) for f in r.functions]
    report = tmp_path / "course.json"
    pairs = [[a, str(p)] for (a, _), p in submissions.items()]
    p = subprocess.run(
        [sys.executable, "-c", _DRIVER, json.dumps(pairs), str(report)],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
        env=_course_env(unpacked, tmp_path),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    body = json.loads(report.read_text())
    assert body["course_form"] and body["package"].startswith(str(unpacked)), body["package"]
    assert body["case_modules"] == []  # nothing to compute a reference or a mistake with
    course_results = {k: _summary(v) for k, v in body["results"].items()}
    differ = {k: (full[k], course_results[k]) for k in full if full[k] != course_results[k]}
    assert differ == {}
    # a probe's line, from the values bundle's probes, in the course form as in the full form
    for (_, kind), path in submissions.items():
        if kind == "symmetric-kl":
            ids = {d for f in course_results[str(path)]["functions"] for d in f[3]}
            assert "relation:swapped" in ids, course_results[str(path)]
    # and what the learner reads: the feedback text of every function, word for word but for
    # what the full form cuts from a learner's exception message as reference material (the
    # course form holds no reference text: docs/instructors.md, "Messages are cut less")
    course_texts = {k: v["text"] for k, v in body["results"].items()}
    worded = [k for k in full if not _same_but_cuts(texts[k], course_texts[k])]
    assert worded == []
    cut = [k for k in full if texts[k] != course_texts[k]]
    named = {
        (f[0], f[2]) for s in full.values() for f in s["functions"] if f[2] is not None
    }  # fmt: skip
    for a in CHOSEN:
        if not ALL and a in COURSE_SLICE:
            continue  # only the first mistakes were compared
        for f in assignments.get(a).functions:
            missed = [m.id for m in f.mistakes if (f.name, m.id) not in named]
            assert missed == [], f"{a} {f.name}: mistakes never named first: {missed}"
    print(
        f"course form = full form on {len(full)} notebooks of {', '.join(CHOSEN)}; feedback "
        f"text word for word on {len(full) - len(cut)}, the rest but for cut messages"
    )


def test_the_course_form_refuses_what_needs_the_answer_key(course, submissions, tmp_path):
    """In the course form: `drills grade`, `cases` and `release` say they need the full form;
    `drills check` with a course secret or for a notebook it does not hold (02) says why; each
    exits 2, with no traceback."""
    _, unpacked = course
    env = _course_env(unpacked, tmp_path)
    solution = str(submissions[(CHOSEN[0], "solution")])

    def drills(*args: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True,
            timeout=300, cwd=tmp_path, env=dict(env, **extra),
        )  # fmt: skip

    for args in (["grade", solution, "--out", str(tmp_path / "g")], ["cases", CHOSEN[0]],
                 ["release", "--check"]):  # fmt: skip
        g = drills(*args)
        assert g.returncode == 2 and "in the repository (the full form)" in g.stderr, g.stderr
        assert "Traceback" not in g.stderr
    s = drills("check", solution, DRILLS_SECRET="a course secret")
    assert s.returncode == 2 and "public draw only" in s.stderr, s.stderr
    assert "Traceback" not in g.stderr + s.stderr
    left = [a for a in notebook.ASSIGNMENTS if a not in RELEASED]
    if left:  # the sweep's course form holds all seven
        later = ROOT / "exercises" / left[0] / f"{left[0]}.ipynb"
        c = drills("check", str(later), "--assignment", left[0])
        assert c.returncode == 2 and f"{left[0]} cannot be checked in the course form" in c.stderr
        assert "did not put it in this course form" in c.stderr, c.stderr
        assert "Traceback" not in c.stderr


def test_the_wheel_installs_for_an_unprivileged_user_and_checks_outside_a_checkout(
    course, submissions
):
    """As an ordinary user, offline: a fresh venv (the project's Python), the course wheel
    installed into it with pip (--no-index; the dependencies from the project's venv on a
    path, never its editable install), then `drills check` on 01's, 05's and 07's solution and
    first mistakes, in a folder outside any checkout: the full form's scores, each mistake
    named; nothing of the repository importable there, and no case module nor
    tiny_model.reference in the installed package."""
    import shutil

    import unprivileged

    why = unprivileged.why_not_as_user()
    if why:
        pytest.skip(why)
    built, _ = course
    checked = [a for a in COURSE_FAST if a in RELEASED]
    unprivileged.ensure_user()
    top = Path(tempfile.mkdtemp(prefix="drills-course-user-"))  # pytest's tmp_path is root's
    try:
        top.chmod(0o755)
        exe = unprivileged.readable_python(top)
        packages = unprivileged.readable_packages(top)
        work = top / "work"
        (work / "home").mkdir(parents=True)
        shutil.copy(built.wheel, work / built.wheel.name)
        for a in checked:
            for kind in ("solution", "mistakes-1"):
                shutil.copy(submissions[(a, kind)], work / f"{a}-{kind}.ipynb")
        subprocess.run(["chown", "-R", f"{unprivileged.USER}:", str(work)], check=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(work / "home"), "LANG": "C.UTF-8",
               "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}  # fmt: skip
        venv = work / "venv"

        def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
            r = unprivileged.as_user(list(args), env, work, timeout=timeout)
            assert r.returncode == 0, f"{args[:3]} as {unprivileged.USER}:\n{r.stdout}{r.stderr}"
            return r

        run(str(exe), "-m", "venv", str(venv))
        site = run(
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_path('purelib'))",
        )
        deps = Path(site.stdout.strip()) / "course_deps.pth"
        line = f"import sys; sys.path.append({str(packages)!r})\n"
        run(str(venv / "bin" / "python"), "-c", f"open({str(deps)!r}, 'w').write({line!r})")
        run(str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--no-index",
            str(work / built.wheel.name), timeout=600)  # fmt: skip
        probe = run(str(venv / "bin" / "python"), "-c",
            "import importlib.util as u, autograder; print(autograder.__file__); "
            "print([m for m in ('autograder.assignments.a01_exact_kl', 'tiny_model.reference') "
            "if u.find_spec(m)])")  # fmt: skip
        where, importable = probe.stdout.split("\n")[:2]
        assert where.startswith(str(venv)) and importable == "[]", probe.stdout
        grader = grade_cli.check_grader()
        for a in checked:
            for kind in ("solution", "mistakes-1"):
                r = run(str(venv / "bin" / "drills"), "check", str(work / f"{a}-{kind}.ipynb"),
                        "--assignment", a, "--json")  # fmt: skip
                got = _summary(json.loads(r.stdout))
                want = grade_cli.check_notebook(submissions[(a, kind)], a, grader=grader)
                want = _summary(
                    {"score": want.score, "functions": [f.to_json() for f in want.functions]}
                )
                assert got == want, (a, kind)
            assert any(f[2] for f in got["functions"]), a  # the mistake, named
    finally:
        shutil.rmtree(top, ignore_errors=True)


_WIDGET_DRIVER = """
import json, sys
from pathlib import Path
from autograder import widgets
from autograder.selfcheck import SelfCheck
a, path, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
proc = widgets.start_warm(a)
served = widgets.ask_server(a, path, timeout=300)
ran = widgets.run_check(path)
check = SelfCheck(a)
names = [f["function"] for f in ran.report["functions"]]
out.write_text(json.dumps({
    "server": proc is not None and served is not None and served.report,
    "run": ran.report,
    "tolerances": {n: list(check.tolerance(n)) for n in names},
}))
proc.stdin.close()
proc.wait(timeout=60)
"""


def test_check_my_work_grades_from_values_in_the_course_form(course, submissions, tmp_path):
    """The Check my work button's two ways to a report (its warm check server, and a
    `drills check` child) in the course form give the full form's report for a mistake; its
    self-checks read each function's tolerance from the values (no case module there)."""
    from autograder.selfcheck import SelfCheck

    _, unpacked = course
    a = CHOSEN[0]
    path = submissions[(a, "mistakes-1")]
    report = tmp_path / "widget.json"
    env = dict(_course_env(unpacked, tmp_path), DRILLS_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("DRILLS_CACHE")
    p = subprocess.run(
        [sys.executable, "-c", _WIDGET_DRIVER, a, str(path), str(report)],
        capture_output=True, text=True, timeout=900, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    body = json.loads(report.read_text())
    r = grade_cli.check_notebook(path, a, grader=grade_cli.check_grader())
    want = _summary({"score": r.score, "functions": [f.to_json() for f in r.functions]})
    assert body["server"], "the check server gave no report"
    assert _summary(body["server"]) == want and _summary(body["run"]) == want
    full = SelfCheck(a)
    assert body["tolerances"] == {n: list(full.tolerance(n)) for n in body["tolerances"]}


def test_a_changed_values_bundle_is_refused_with_a_sentence(course, submissions, tmp_path):
    """A bundle whose values were edited (an expected value made to match a wrong function):
    `drills check` refuses it, saying the fingerprint does not match, instead of grading
    against it."""
    import shutil

    _, unpacked = course
    copy = tmp_path / "unpacked"
    shutil.copytree(unpacked, copy)
    a = CHOSEN[0]
    bundle = copy / "autograder" / "course_values" / f"{a}.json"
    data = json.loads(bundle.read_text())
    first = data["body"]["names"][0]
    data["body"]["expected"][first][0] = {"value": 0.0}
    bundle.write_text(json.dumps(data))
    p = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "check", str(submissions[(a, "solution")])],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env=_course_env(copy, tmp_path),
    )  # fmt: skip
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"{a}.json's fingerprint does not match its values" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


_RUN_NOTEBOOK = """
import sys
import nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
print(len(errors), [e.get("ename") for e in errors])
"""


def test_a_solved_notebook_runs_in_the_course_form(course, submissions, tmp_path):
    """01 with the solution pasted into its exercise, run top to bottom by a kernel that has
    only the course form's package: every cell runs, its self-checks (whose tolerances come
    from the values) pass, with no error output."""
    _, unpacked = course
    a = RELEASED[0]
    p = subprocess.run(
        [sys.executable, "-c", _RUN_NOTEBOOK, str(submissions[(a, "solution")]), str(tmp_path)],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
        env=_course_env(unpacked, tmp_path),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip().splitlines()[-1] == "0 []", p.stdout[-2000:]


def test_every_module_the_behaviour_scan_skips_exists():
    """The scan runs no function of the engine's process control (it forks, exits or waits on
    children). When sandbox.py became a package, the skip still named the old file: the scan
    ran the package's functions and did not finish in 900 s. Does every skipped path name a
    file or package that exists, so a rename cannot do that again?"""
    from autograder.course import course_release

    for rel in course_release.NOT_RUN:
        path = ROOT / rel.rstrip("/")
        assert path.is_dir() if rel.endswith("/") else path.is_file(), rel


_LIVE_RUN = """
import json, sys
import nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=900, kernel_name="python3", allow_errors=True,
               resources={"metadata": {"path": sys.argv[2]}}).execute()
cells = []
for c in nb.cells:
    if c.cell_type == "code":
        outs = c.get("outputs", [])
        cells.append({"source": c.source, "errors": [o.get("ename") for o in outs if o.get("output_type") == "error"],
                      "text": "".join(o.get("text", "") for o in outs if o.get("output_type") == "stream")})
print(json.dumps(cells))
"""
LIVE_CELL = {
    "05_grpo_lld": "probes = {}",
    "06_nthr": "probe = None",
    "07_beyond_nthr": "if EXPLORE and study",
}


def _pooled_rows(text: str) -> list[list[str]]:
    """The pooled rows of each probe table printed in ``text`` (the lines after "pooled:")."""
    tables, rows = [], None
    for line in text.splitlines():
        if line.strip() == "pooled:":
            rows = []
            tables.append(rows)
        elif rows is not None and line.startswith("  ") and not line.startswith("  seed"):
            rows.append(" ".join(line.split()))
        else:
            rows = None
    return tables


def _run_live(notebook_file: Path, folder: Path, unpacked: Path, home: Path) -> list[dict]:
    env = _course_env(unpacked, home)
    env.pop("NBGRADER_EXECUTION", None)  # the live cells run (EXPLORE)
    p = subprocess.run(
        [sys.executable, "-c", _LIVE_RUN, str(notebook_file), str(folder)],
        capture_output=True, text=True, timeout=1200, cwd=folder, env=env,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _solved_folder(top: Path, notebooks: tuple[str, ...]) -> Path:
    """A learner's folder with each notebook solved in its own folder (nbgrader's layout)."""
    for nb in notebooks:
        (top / nb).mkdir(parents=True)
        solved = learner_notebook(nb, "solution", None, secret=seeds.PUBLIC_DEFAULT_SECRET)
        (top / nb / f"{nb}.ipynb").write_text(json.dumps(solved), encoding="utf-8")
    return top


def test_live_cells_run_on_the_learners_functions_in_the_course_form(course, tmp_path):
    """05 solved, in a learner's folder beside their solved 07 (whose clipped_surrogate is the
    probe's loss: the course form ships no reference), run top to bottom by a kernel that has
    only the course form's package: every cell runs without an error, and the live probe's
    pooled rows are the shipped probe's (the reference functions), digit for digit. Then 05
    with its stub and no 07 beside it: the live cell names both functions and why, and shows
    the shipped probe instead, without an error. Catches a live cell that needs the answer key,
    a gate that lets a stub through, and a live run that differs from the shipped figures."""
    from tiny_model.pooled import shipped_probe_table

    _, unpacked = course
    a = "05_grpo_lld"
    if a not in RELEASED:
        pytest.skip("this course form does not hold 05")
    work = _solved_folder(tmp_path / "solved", (a, "07_beyond_nthr"))
    cells = _run_live(work / a / f"{a}.ipynb", work / a, unpacked, tmp_path)
    errors = [(c["source"][:60], c["errors"]) for c in cells if c["errors"]]
    assert errors == []
    (live,) = [c for c in cells if c["source"].startswith(LIVE_CELL[a])]
    shipped = [_pooled_rows(shipped_probe_table(a, rule))[0] for rule in ("sgd", "adam")]
    assert _pooled_rows(live["text"]) == shipped, live["text"]

    stub = tmp_path / "stub" / a
    stub.mkdir(parents=True)
    nb = learner_notebook(a, "stub", None, secret=seeds.PUBLIC_DEFAULT_SECRET)
    (stub / f"{a}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    cells = _run_live(stub / f"{a}.ipynb", stub, unpacked, tmp_path)
    (live,) = [c for c in cells if c["source"].startswith(LIVE_CELL[a])]
    assert live["errors"] == [], live
    text = live["text"]
    assert "group_advantages (notebook 05): not written yet" in text, text
    assert "clipped_surrogate (notebook 07): your 07_beyond_nthr.ipynb was not found" in text
    assert _pooled_rows(text) == shipped, text


@pytest.mark.parametrize("a", ["06_nthr", "07_beyond_nthr"])
def test_06_and_07_train_live_on_the_learners_functions_in_the_course_form(course, tmp_path, a):
    """06 or 07 solved, beside the learner's other solved notebooks of 05-07, run top to bottom
    by a kernel with only the course form's package: no cell errs, 06's live probe prints the
    shipped probe's pooled rows, and the live training run (06's NTHR, 07's thr_explore) is
    told it agrees with the shipped run. Catches a live cell that still reaches for the
    solutions or the reference, and a learner's loss that moves the training."""
    from tiny_model.pooled import shipped_probe_table

    if a not in LIVE:
        pytest.skip(f"{a}'s live cells run with DRILLS_COURSE_LIVE_ALL=1 (about a minute)")
    _, unpacked = course
    work = _solved_folder(tmp_path / "solved", ("05_grpo_lld", "06_nthr", "07_beyond_nthr"))
    cells = _run_live(work / a / f"{a}.ipynb", work / a, unpacked, tmp_path)
    assert [(c["source"][:60], c["errors"]) for c in cells if c["errors"]] == []
    text = "".join(c["text"] for c in cells)
    if a == "06_nthr":
        (live,) = [c for c in cells if c["source"].startswith(LIVE_CELL[a])]
        assert _pooled_rows(live["text"]) == _pooled_rows(shipped_probe_table(a)), live["text"]
    assert "with your functions" in text and "Agrees:" in text, text[-3000:]
