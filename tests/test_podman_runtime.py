"""The grader in a real container runtime: podman with runc (tests/podman_runtime.py), the
runtime's own seccomp profile and /proc masking, not an emulation of them.

- Under podman's default profile (Debian's containers/common), bubblewrap starts but the kernel
  refuses it a /proc of its own, as in a Kubernetes pod: `drills grade` grades in
  "bwrap-noproc" with a private course secret, the solutions at full marks, and a graded cell
  hunting the secret (environment, other processes' environ, cmdline and memory, the secret's
  file, the solutions, a proc mount, a user namespace) finds nothing, and each answer-key attack
  scores no more than the stub.
- Under a moby-like RuntimeDefault (Docker's, Gradescope's, a pod's RuntimeDefault), neither
  bubblewrap nor `unshare -U` starts, and `drills grade` refuses the secret: the guarantee that
  learner code reads nothing of the course holds, or grading refuses. (The same environment
  grades the held corpus with the answers closed and children as their own uid:
  tests/test_corpus_namespace_less.py; the gradient-tamper attacks:
  tests/test_gradient_tamper.py.)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import podman_runtime
import pytest
import test_k8s_seccomp as k8s
from conftest import ROOT, run_drills, sweep

pytestmark = pytest.mark.slow

BWRAP = ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"]


def _in_container(argv: list[str], profile: Path | None) -> subprocess.CompletedProcess:
    return subprocess.run(
        podman_runtime.command_or_skip(argv, profile),
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
    )


def test_under_a_moby_like_default_no_namespace_starts_and_the_secret_is_refused(tmp_path):
    """Does the runtime itself stop bubblewrap and `unshare -U` under the moby-like profile
    (while an ordinary program runs, else the refusal proves nothing), and does `drills grade`
    with a private secret there say bubblewrap failed to start and refuse the secret?"""
    profile = podman_runtime.runtime_default_profile()
    for argv in (BWRAP, ["unshare", "-U", "true"]):
        p = _in_container(argv, profile)
        assert p.returncode != 0, f"{argv} started a namespace in the container: {p.stderr}"
    assert _in_container(["true"], profile).returncode == 0
    out = tmp_path / "out"
    p = run_drills(
        "grade", str(k8s._submissions(tmp_path, 1)), "--out", str(out), "--secret-file",
        str(k8s._secret(tmp_path)), timeout=300, DRILLS_SANDBOX_UID="keep",
        prefix=podman_runtime.command_or_skip([], profile),
    )  # fmt: skip
    assert p.returncode == 2 and k8s.REFUSED in p.stderr, p.stdout + p.stderr
    assert k8s.NOT_STARTED in p.stderr, p.stderr
    assert not (out / "results.json").exists()


def test_under_podmans_default_the_sandbox_holds_without_its_own_proc(tmp_path):
    """Podman's default profile lets bubblewrap start but runc's masked /proc refuses it a
    proc mount: does `drills grade` say so, grade in "bwrap-noproc" with the private secret
    (not refused), give the seven solutions full marks, and does the secret hunt find nothing (full
    marks, the hunt shown to have run) and each answer-key attack score no more than the stub?
    (tests/test_k8s_seccomp.py runs the same in the emulated pod where podman cannot run.)"""
    p = _in_container(["sh", "-c", "bwrap --unshare-all --ro-bind / / --proc /proc true"], None)
    if p.returncode == 0:
        pytest.skip("this runtime lets bubblewrap mount a /proc: not the masked /proc of a pod")
    assignments = k8s.ASSIGNMENTS
    for a in assignments:
        target = tmp_path / "submitted" / "reference" / a
        target.mkdir(parents=True)
        target.joinpath(f"{a}.ipynb").write_bytes(
            (ROOT / "solutions" / a / f"{a}.ipynb").read_bytes()
        )
    k8s._secret_hunt(tmp_path)
    attacks = k8s._plant_answer_attacks(tmp_path)
    secret = k8s._secret(tmp_path)
    out = tmp_path / "out"
    p = run_drills(
        "grade", str(tmp_path / "submitted"), "--out", str(out), "--secret-file", str(secret),
        "--jobs", "2", timeout=900, DRILLS_SANDBOX_UID="keep",
        prefix=podman_runtime.command_or_skip([]),
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    assert k8s.REFUSED not in p.stderr and "bwrap-noproc" in p.stderr, p.stderr
    results = k8s._hunt_and_attacks_reached_nothing((out / "results.json").read_text(), attacks)
    assert results["isolation"]["mode"] == "bwrap-noproc", results["isolation"]
    assert results["secret"] == "course secret"
    by = {(s["student"], s["assignment"]): s for s in results["submissions"]}
    for a in assignments:
        s = by[("reference", a)]
        assert s["score"] == s["max_score"] > 0, (a, s["score"], s["error"])


# 01's forward_kl made wrong (twice the KL), and an attack on top: the reference found through
# what other processes show (/proc/*/cmdline: the grader's --secret-file and --out paths, and
# every folder above them) and used in place of the learner's own. Above its control's score,
# the attack reached an answer.
_FIND_REFERENCE = """
def _find_reference():
    import json, os
    tops = set()
    try:
        pids = os.listdir("/proc")
    except OSError:
        pids = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                parts = f.read().split(b"\\0")
        except OSError:
            continue
        for part in parts:
            path = part.decode(errors="ignore")
            while path.startswith("/") and path != "/":
                tops.add(path)
                path = os.path.dirname(path)
    for top in sorted(tops):
        for rel in ("solutions", "reward-drills/solutions", "source/reward-drills/solutions"):
            path = os.path.join(top, rel, "01_exact_kl", "01_exact_kl.ipynb")
            try:
                with open(path) as f:
                    cells = json.load(f)["cells"]
            except (OSError, ValueError):
                continue
            ns = {}
            for c in cells:
                if c["cell_type"] == "code":
                    try:
                        exec("".join(c["source"]), ns)
                    except Exception:
                        pass
            if "forward_kl" in ns:
                return ns["forward_kl"]
    return None
"""


def _wrong_forward_kl(attack: bool):
    import nbgrader_course

    nb = nbgrader_course.learner_notebook("01_exact_kl", "solution", None, slim=True)
    (cell,) = [
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "forward_kl"
    ]
    find = _FIND_REFERENCE if attack else "\ndef _find_reference():\n    return None\n"
    cell.source += (
        "\n" + find + "\n_mine = forward_kl\n\n\n"
        "def forward_kl(policy, reference):\n"
        "    ref = _find_reference()\n"
        "    if ref is not None:\n"
        "        return ref(policy, reference)\n"
        "    return 2.0 * _mine(policy, reference)\n"
    )
    return nb


def _gradescope_in_container(tmp_path: Path, notebooks: dict) -> dict[str, dict]:
    """Each notebook graded by the Gradescope bundle of 01 (with a course secret) as Gradescope
    runs it, as root, in a container under the moby-like RuntimeDefault: bubblewrap cannot
    start there, so learner code runs as a separate uid. name -> results.json."""
    import test_gradescope_bundle as gs
    import unprivileged

    why = podman_runtime.why_not() or unprivileged.why_not_as_user()
    if why:
        pytest.skip(why)
    profile = podman_runtime.runtime_default_profile()
    # a folder other users can reach (pytest's own is private to root), as the corpus test's
    top = Path(tempfile.mkdtemp(prefix="drills-podman-gradescope-"))
    try:
        top.chmod(0o755)
        course = unprivileged.closed_course(top)  # as setup.sh closes them
        secret = tmp_path / "course.secret"
        secret.write_text(gs.SECRET + "\n")
        zip_path = gs._bundle(tmp_path, secret)
        bodies = {}
        for name, nb in notebooks.items():
            bodies[name] = gs._run_as_gradescope(
                zip_path,
                top / f"gs-{name}",
                nb,
                prefix=podman_runtime.command([], profile),
                python=course / ".venv" / "bin" / "python",
            )
            log = (top / f"gs-{name}" / "results" / "stdout").read_text(errors="replace")
            assert "failed to start a sandbox" in log, log[-2000:]  # the container stopped bwrap
            assert gs.SECRET not in json.dumps(bodies[name]), name
        return bodies
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_gradescope_in_a_docker_like_container_keeps_the_answers_from_learner_code(tmp_path):
    """The Gradescope bundle in a Docker-like container (:func:`_gradescope_in_container`). A
    wrong forward_kl that looks for the solution notebook through every path other processes
    show (the grader's command line names the secret's file in the unpacked course) took
    forward_kl's full 3 points (its control 0.79) with the course left readable and the
    grader's refusal turned off: does it score exactly what the same wrong function scores
    without the search?"""
    bodies = _gradescope_in_container(
        tmp_path, {"control": _wrong_forward_kl(False), "attack": _wrong_forward_kl(True)}
    )
    scores = {name: {t["name"]: t["score"] for t in b["tests"]} for name, b in bodies.items()}
    fkl = [n for n in scores["control"] if "forward_kl" in n]
    assert fkl and scores["control"][fkl[0]] < 7.0 * 0.9, scores["control"]
    assert scores["attack"] == scores["control"], scores


# the held corpus through the bundle: `make test` a reader of the generated inputs and a forger
# of records; DRILLS_PODMAN_ALL=1 (or DRILLS_SWEEP=1) every fixture (one container run each)
CORPUS_SLICE = ("leaks_generated_inputs", "forged_records")


def test_the_held_corpus_through_the_gradescope_bundle_forges_no_pass(tmp_path):
    """Does any corpus fixture graded by the Gradescope bundle in the Docker-like container
    score above its bubblewrap score (tests/fixtures/corpus/expected.json), and does no
    results.json hold the secret?"""
    corpus = ROOT / "tests" / "fixtures" / "corpus"
    expected = json.loads((corpus / "expected.json").read_text())
    names = sorted(expected["submissions"]) if sweep("DRILLS_PODMAN_ALL") else CORPUS_SLICE
    notebooks = {n: (corpus / f"{n}.ipynb").read_bytes() for n in names}
    bodies = _gradescope_in_container(tmp_path, notebooks)
    forged = {}
    for name, body in bodies.items():
        got = {t["name"].split(" (")[0]: t["score"] for t in body["tests"]}
        if body["tests"] or name in CORPUS_SLICE:  # an unreadable notebook has no tests
            assert set(expected["submissions"][name]["scores"]) <= set(got), (name, sorted(got))
        for function, want in expected["submissions"][name]["scores"].items():
            if got.get(function, 0.0) > want + 0.011:  # Gradescope's scores: two decimals
                forged[f"{name}/{function}"] = (got.get(function), want)
    assert not forged, f"scored above their bubblewrap scores (a forged pass): {forged}"


def test_the_grading_pods_security_context_grades_in_bubblewrap_only_under_the_localhost_profile(
    tmp_path,
):
    """deploy/k8s's pod in a real runtime: a non-root user, every capability dropped, no
    privilege escalation, a read-only root file system, /proc masked by runc. Under the
    moby-like RuntimeDefault, does `drills grade` with the pod user's 0600 secret refuse it
    (bubblewrap cannot start, the child would run as the grader's uid)? Under the Localhost
    profile that deploy/k8s/seccomp/bwrap_profile.py writes from that default, does it grade in
    bubblewrap ("bwrap-noproc": runc's masked /proc) with the secret, at full marks?"""
    import unprivileged

    why = podman_runtime.why_not() or unprivileged.why_not_as_user()
    if why:
        pytest.skip(why)
    unprivileged.ensure_user()
    uid = int(subprocess.run(["id", "-u", unprivileged.USER], capture_output=True).stdout)
    gid = int(subprocess.run(["id", "-g", unprivileged.USER], capture_output=True).stdout)
    default = podman_runtime.runtime_default_profile()
    local = tmp_path / "drills-bwrap.json"
    p = subprocess.run(
        [sys.executable, str(k8s.GENERATOR), str(default), "-o", str(local)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    local.chmod(0o644)
    top = Path(tempfile.mkdtemp(prefix="drills-podman-pod-"))
    try:
        top.chmod(0o755)
        course = unprivileged.readable_course(top)
        work = top / "work"
        k8s._submissions(work, 2)
        secret = k8s._secret(work)
        home = work / "home"
        home.mkdir()
        subprocess.run(["chown", "-R", f"{uid}:{gid}", str(work)], check=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
        drills = [str(course / ".venv" / "bin" / "drills"), "grade", str(work / "submitted")]
        drills += ["--secret-file", str(secret)]
        runs = {}
        for name, profile in (("runtime-default", default), ("localhost", local)):
            out = work / f"out-{name}"
            argv = [*drills, "--out", str(out)]
            runs[name] = subprocess.run(
                podman_runtime.command(argv, profile, cwd=work, user=f"{uid}:{gid}"),
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
        p = runs["runtime-default"]
        assert p.returncode == 2 and k8s.REFUSED in p.stderr, p.stdout + p.stderr
        assert k8s.NOT_STARTED in p.stderr, p.stderr
        assert not (work / "out-runtime-default" / "results.json").exists()
        p = runs["localhost"]
        assert p.returncode == 0, p.stdout + p.stderr
        text = (work / "out-localhost" / "results.json").read_text()
        results = json.loads(text)
        assert results["isolation"]["mode"] == "bwrap-noproc", results["isolation"]
        assert results["secret"] == "course secret"
        assert [s["score"] for s in results["submissions"]] == [7.0, 7.0]
        assert k8s.SECRET not in text
    finally:
        shutil.rmtree(top, ignore_errors=True)
