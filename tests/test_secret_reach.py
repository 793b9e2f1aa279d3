"""The course secret is out of learner code's reach under every isolation mode, or not used.

The attack is the corpus's reference solution with one more cell: its forward_kl reads the
secret's file by its absolute path (an instructor's recipes publish it: /secret/course.secret
in the pods, /autograder/source/course.secret on Gradescope) and every process's environment
for DRILLS_SECRET, and returns what it found, which would put the secret in results.json and
on the feedback page. First the attack is shown to work where nothing stops it (this test's
own process); then `drills grade` runs it with a course secret:

- under bubblewrap, the file is not in the child's view and the grader's processes are in
  another pid namespace: full marks, nothing leaked;
- without bubblewrap, as the grader's own user (DRILLS_SANDBOX=none; the pods' fallback), the
  child could read all of it: `drills grade` refuses the secret, saying why, and grades
  nothing;
- without bubblewrap, as a separate uid (the grader is root and its Python is readable by other
  users, as on Gradescope): graded with full marks while the secret's file is private, and
  refused while it is readable by others.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from conftest import run_drills

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"
A = "01_exact_kl"
SECRET = "reach-test-secret-5150"
REFUSED = "refusing to grade with the course secret"

pytestmark = pytest.mark.slow

_ATTACK = """
import os as _os

_honest_forward_kl = forward_kl


def _steal():
    found = []
    for target in ({path!r}, {solution!r}):
        try:
            with open(target) as f:
                found.append(f.read()[:60])
        except OSError:
            pass
    for pid in _os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{{pid}}/environ", "rb") as f:
                    env = f.read().decode(errors="replace")
            except OSError:
                continue
            found += [v for v in env.split("\\0") if v.startswith("DRILLS_SECRET")]
    return found


def forward_kl(policy, reference):
    found = _steal()
    if found:
        return "LEAKED: " + " | ".join(found)
    return _honest_forward_kl(policy, reference)
"""


def _attack(folder: Path, secret_path: Path, course: Path = REPO) -> Path:
    """submitted/mallory/01_exact_kl/01_exact_kl.ipynb: the solution with the attack in its
    graded forward_kl cell (a cell without a grade_id is never run by the grader: an attack
    there would prove nothing), reading the secret, every environment and the solution."""
    nb = nbformat.read(str(CORPUS / "solution.ipynb"), as_version=4)
    solution = course / "solutions" / A / f"{A}.ipynb"
    attack = _ATTACK.format(path=str(secret_path), solution=str(solution))
    (cell,) = [
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "forward_kl"
    ]
    cell.source += "\n" + attack
    target = folder / "submitted" / "mallory" / A / f"{A}.ipynb"
    target.parent.mkdir(parents=True)
    nbformat.write(nb, str(target))
    return folder / "submitted"


def _secret(folder: Path, mode: int) -> Path:
    path = folder / "course.secret"
    path.write_text(SECRET + "\n")
    path.chmod(mode)
    return path


def _score(out: Path) -> tuple[float, str]:
    """(mallory's score, every text of results.json) after a run that graded."""
    text = (out / "results.json").read_text()
    sub = json.loads(text)["submissions"][0]
    return sub["score"], text


def test_the_attack_reads_the_secret_where_nothing_stops_it(tmp_path):
    """Run in this process (no sandbox), does the attack cell find the secret? (Otherwise the
    tests below would pass for the wrong reason.)"""
    secret = _secret(tmp_path, 0o600)
    nb = nbformat.read(str(_attack(tmp_path, secret) / "mallory" / A / f"{A}.ipynb"), 4)
    scope: dict = {}
    for cell in nb.cells:  # what the grader runs: the setup and the graded cells
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("solution") or meta.get("locked")):
            if "grade_id" in meta and not meta.get("grade", False):
                exec(cell.source, scope)  # noqa: S102 (the test's own attack, in this process)
    assert SECRET in scope["forward_kl"]([0.5, 0.5], [0.5, 0.5])


def test_under_bubblewrap_the_attack_finds_no_secret(tmp_path):
    """Graded in bubblewrap with a course secret: full marks and the secret nowhere?"""
    probe = subprocess.run(["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"])
    if shutil.which("bwrap") is None or probe.returncode != 0:
        pytest.skip("bubblewrap cannot start a sandbox here")
    secret = _secret(tmp_path, 0o600)
    out = tmp_path / "out"
    p = run_drills(
        "grade", str(_attack(tmp_path, secret)), "--out", str(out), "--secret-file", str(secret),
        timeout=300, DRILLS_SECRET_FILE=str(secret),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    score, text = _score(out)
    assert json.loads(text)["isolation"]["mode"] == "bwrap"
    assert SECRET not in text and "LEAKED" not in text and score == 7.0


def test_without_bubblewrap_as_the_graders_own_user_the_secret_is_refused(tmp_path):
    """DRILLS_SANDBOX=none with the child running as the grader's uid (as in the pods): does
    `drills grade` refuse the secret, saying why, before any learner code runs?"""
    secret = _secret(tmp_path, 0o600)
    out = tmp_path / "out"
    p = run_drills(
        "grade", str(_attack(tmp_path, secret)), "--out", str(out), "--secret-file", str(secret),
        timeout=300, DRILLS_SANDBOX="none", DRILLS_SANDBOX_UID="keep",
    )  # fmt: skip
    assert p.returncode == 2, p.stdout + p.stderr
    assert REFUSED in p.stderr and "own user" in p.stderr, p.stderr
    assert not (out / "grades.csv").exists() and not (out / "results.json").exists()
    # the same run with the public default (nothing to steal) grades
    p = run_drills(
        "grade", str(tmp_path / "submitted"), "--out", str(out), timeout=300,
        DRILLS_SANDBOX="none", DRILLS_SANDBOX_UID="keep",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]


def _why_no_separate_uid() -> str | None:
    import unprivileged

    return unprivileged.why_not_as_user()


def _how(where: str) -> tuple[dict[str, str], list[str]]:
    """(environment, command prefix) of a run without bubblewrap: forced off, or in an
    environment that refuses user namespaces as a container does (tests/namespace_less.py)."""
    if where == "sandbox-off":
        return {"DRILLS_SANDBOX": "none"}, []
    import namespace_less

    return {}, namespace_less.command_or_skip([])


def test_the_namespace_less_environment_refuses_user_namespaces():
    """The emulated container must stop bubblewrap, or the runs "namespace-less" below would
    test bubblewrap again: do `unshare -U` and bwrap both fail in it?"""
    import namespace_less

    why = namespace_less.why_not()
    if why:
        pytest.skip(why)
    for cmd in (
        ["unshare", "-U", "true"],
        ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"],
    ):
        if shutil.which(cmd[0]) is None:
            continue
        p = subprocess.run(namespace_less.command(cmd), capture_output=True, text=True)
        assert p.returncode != 0, f"{cmd[0]} started a namespace: {p.stdout}{p.stderr}"


@pytest.mark.parametrize("where", ["sandbox-off", "namespace-less"])
def test_without_bubblewrap_as_the_graders_own_user_a_secret_is_refused_anywhere(tmp_path, where):
    """Where bubblewrap cannot start (a container refusing user namespaces) and the child would
    run as the grader's own uid: is the secret refused before any learner code runs?"""
    env_extra, prefix = _how(where)
    secret = _secret(tmp_path, 0o600)
    out = tmp_path / "out"
    env = dict(os.environ, DRILLS_SANDBOX_UID="keep", **env_extra)
    env.pop("DRILLS_SECRET", None)
    p = subprocess.run(
        [*prefix, sys.executable, "-m", "autograder.cli", "grade", str(_attack(tmp_path, secret)),
         "--out", str(out), "--secret-file", str(secret)],
        env=env, capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert p.returncode == 2 and REFUSED in p.stderr, p.stdout + p.stderr
    assert not (out / "results.json").exists()
    if where == "namespace-less":  # it tried bubblewrap, which could not start
        assert "failed to start a sandbox" in p.stderr, p.stderr


@pytest.mark.skipif(_why_no_separate_uid() is not None, reason=f"{_why_no_separate_uid()}")
@pytest.mark.parametrize("where", ["sandbox-off", "namespace-less"])
def test_without_bubblewrap_as_a_separate_uid_only_a_private_secret_is_used(where):
    """The grader is root and its Python is readable by others, so children run as separate
    uids (Gradescope's case when bubblewrap cannot start): is the attack kept from a private
    secret (0600) and from the solutions with full marks, and is a secret readable by others
    refused? With bubblewrap turned off, and where a container's rule keeps it from starting."""
    import unprivileged

    env_extra, prefix = _how(where)

    unprivileged.ensure_user()  # readable_course checks readability as this user
    top = Path(tempfile.mkdtemp(prefix="drills-secret-reach-"))
    try:
        top.chmod(0o755)
        course = unprivileged.closed_course(top)  # a Python other users can read
        private = top / "private"
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(private / "home"),
            "LANG": "C.UTF-8",
            "DRILLS_CACHE_DIR": str(private / "cache"),
            **env_extra,
        }
        drills = str(course / ".venv" / "bin" / "drills")

        def grade(secret: Path, out: Path) -> subprocess.CompletedProcess:
            subs = (
                _attack(out.parent, secret, course)
                if not (out.parent / "submitted").exists()
                else None
            )
            args = [
                *prefix,
                drills,
                "grade",
                str(subs or out.parent / "submitted"),
                "--out",
                str(out),
            ]
            return subprocess.run(
                [*args, "--secret-file", str(secret)],
                env=env, capture_output=True, text=True, timeout=300,
            )  # fmt: skip

        secret = _secret(private, 0o600)
        p = grade(secret, private / "out")
        assert p.returncode == 0, p.stderr[-2000:]
        score, text = _score(private / "out")
        assert json.loads(text)["isolation"]["mode"] == "reduced"
        assert SECRET not in text and "LEAKED" not in text and score == 7.0

        open_folder = top / "open"
        open_folder.mkdir(mode=0o755)
        readable = _secret(open_folder, 0o644)
        p = grade(readable, private / "out2")
        assert p.returncode == 2 and REFUSED in p.stderr, p.stdout + p.stderr
        assert str(readable) in p.stderr, p.stderr
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
