"""The batch recipes of deploy/ (docs/large-courses.md), run here by hand.

There is no Slurm and no Kubernetes on a test machine. What can be tried is tried: each
Slurm script runs under bash with the variables Slurm would set (SLURM_ARRAY_TASK_ID for
tasks 1..N), the Indexed Job's container script runs with JOB_COMPLETION_INDEX 0..N-1 (its
volume paths mapped to a temporary folder), the manifests are parsed as YAML and checked
for the fields an Indexed Job needs. Scheduling, volumes and images stay untried.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import nbgrader_course
import pytest
import yaml
from conftest import ROOT, VENV_BIN

SLURM = ROOT / "deploy" / "slurm"
K8S = ROOT / "deploy" / "k8s"
A = "01_exact_kl"
N = 2


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("deploy")
    for student, kind in [("ann", "solution"), ("ben", "stub"), ("cid", "mistakes-2")]:
        folder = tmp / "submitted" / student / A
        folder.mkdir(parents=True)
        nb = nbgrader_course.learner_notebook(A, kind, student)
        nbformat.write(nb, str(folder / f"{A}.ipynb"))
    (tmp / "course.secret").write_text("deploy-secret-1\n")
    return tmp


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DRILLS_", "SLURM_"))}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def _bash(script: Path | str, env: dict[str, str], cwd: Path = ROOT) -> None:
    args = ["bash", str(script)] if isinstance(script, Path) else ["bash", "-c", script]
    p = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]


def _rows(out: Path) -> list[str]:
    return (out / "grades.csv").read_text().splitlines()


def _recipe_env(course: Path, out: Path) -> dict[str, str]:
    """What every task of the recipe is given: the course, the class, the secret, OUT_ROOT."""
    return dict(
        COURSE_DIR=str(ROOT),
        SHARDS=str(N),
        SUBMITTED=str(course / "submitted"),
        OUT_ROOT=str(out),
        SECRET_FILE=str(course / "course.secret"),
    )


@pytest.mark.slow
def test_slurm_array_tasks_and_merge_grade_every_submission_once(course):
    """grade-shard.sbatch as array tasks 1..2, then merge.sbatch: one gradebook with every
    submission once, each shard in its own folder?"""
    out = course / "slurm"
    common = _recipe_env(course, out)
    for k in range(1, N + 1):
        _bash(SLURM / "grade-shard.sbatch", _env(SLURM_ARRAY_TASK_ID=str(k), **common))
        assert (out / f"shard-{k}-of-{N}" / "run.json").is_file()
    _bash(SLURM / "merge.sbatch", _env(**common))
    rows = _rows(out / "merged")
    assert [r.split(",")[3] for r in rows[1:]] == ["ann", "ben", "cid"]


@pytest.mark.slow
def test_task_without_sandbox_refuses_the_secret_and_regrading_it_recovers(course):
    """A task on a node where bubblewrap cannot start would run learner code as the instructor's
    own user, who can read the secret: does it stop before grading, saying why (its log is what
    docs/large-courses.md's recovery greps for), does the merge refuse the missing shard, and
    does grading that task again with a sandbox let the merge through?"""
    probe = subprocess.run(["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"])
    if shutil.which("bwrap") is None or probe.returncode != 0:
        pytest.skip("bubblewrap cannot start a sandbox here: every task would refuse the secret")
    out = course / "reduced"
    common = _recipe_env(course, out)
    env = _env(SLURM_ARRAY_TASK_ID="1", DRILLS_SANDBOX="reduced", DRILLS_SANDBOX_UID="keep")
    p = subprocess.run(
        ["bash", str(SLURM / "grade-shard.sbatch")],
        env=dict(env, **common),
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode != 0 and "refusing to grade with the course secret" in p.stderr, p.stderr
    assert not (out / f"shard-1-of-{N}" / "run.json").exists()
    _bash(SLURM / "grade-shard.sbatch", _env(SLURM_ARRAY_TASK_ID="2", **common))
    p = subprocess.run(
        ["bash", str(SLURM / "merge.sbatch")], env=_env(**common), capture_output=True, text=True
    )
    assert p.returncode != 0, p.stderr
    _bash(SLURM / "grade-shard.sbatch", _env(SLURM_ARRAY_TASK_ID="1", **common))
    _bash(SLURM / "merge.sbatch", _env(**common))
    assert [r.split(",")[3] for r in _rows(out / "merged")[1:]] == ["ann", "ben", "cid"]


def test_slurm_task_outside_an_array_is_refused():
    """Run without SLURM_ARRAY_TASK_ID: does the script stop with a message, grading nothing?"""
    p = subprocess.run(
        ["bash", str(SLURM / "grade-shard.sbatch")],
        env=_env(COURSE_DIR=str(ROOT), SHARDS="3"),
        capture_output=True,
        text=True,
    )
    assert p.returncode != 0 and "job array" in p.stderr


def test_slurm_task_with_an_unreadable_secret_stops_before_grading(tmp_path):
    """A secret file that this node cannot see (not on shared storage): does the task stop at
    once naming the file, instead of grading with the wrong secret or a long traceback?"""
    p = subprocess.run(
        ["bash", str(SLURM / "grade-shard.sbatch")],
        env=_env(
            COURSE_DIR=str(ROOT),
            SHARDS="2",
            SLURM_ARRAY_TASK_ID="1",
            OUT_ROOT=str(tmp_path / "graded"),
            DRILLS_SECRET_FILE=str(tmp_path / "elsewhere.secret"),
        ),
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and "elsewhere.secret" in p.stderr, p.stderr
    assert not (tmp_path / "graded").exists()


# -- submit.sh, with stand-ins for sbatch and squeue that record what they are asked -------------

FAKE_SBATCH = r"""#!/usr/bin/env bash
n=$(( $(cat "$FAKE/count" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$FAKE/count"
{ printf '%s\n' "$@"; echo "SECRET_FILE=${SECRET_FILE-unset}"; echo "SUBMITTED=$SUBMITTED"
  echo "OUT_ROOT=$OUT_ROOT"; echo "umask=$(umask)"; } > "$FAKE/sbatch-$n"
echo "$((4240 + n));cluster-a"
"""
FAKE_SQUEUE = r"""#!/usr/bin/env bash
echo "$@" > "$FAKE/squeue-args"; cat "$FAKE/queue" 2>/dev/null || true
"""


@pytest.fixture
def fake_slurm(tmp_path):
    """(environment for submit.sh, folder where the stand-ins write what they were asked)."""
    fake = tmp_path / "fake"
    (fake / "bin").mkdir(parents=True)
    for name, text in (("sbatch", FAKE_SBATCH), ("squeue", FAKE_SQUEUE)):
        (fake / "bin" / name).write_text(text)
        (fake / "bin" / name).chmod(0o755)
    sub = tmp_path / "submitted" / "ann" / A
    sub.mkdir(parents=True)
    (sub / f"{A}.ipynb").write_text("{}")
    (tmp_path / "course.secret").write_text("s3cret\n")
    env = _env(
        FAKE=str(fake),
        COURSE_DIR=str(ROOT),
        SHARDS="3",
        SUBMITTED=str(tmp_path / "submitted"),
        OUT_ROOT=str(tmp_path / "graded"),
        SECRET_FILE=str(tmp_path / "course.secret"),
    )
    env["PATH"] = f"{fake / 'bin'}{os.pathsep}{env['PATH']}"
    return env, fake


def _submit(env: dict[str, str], *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SLURM / "submit.sh"), *args], env=env, cwd=cwd, capture_output=True, text=True
    )


def _calls(fake: Path) -> list[list[str]]:
    return [
        (fake / f"sbatch-{n}").read_text().splitlines()
        for n in range(1, 10)
        if (fake / f"sbatch-{n}").exists()
    ]


def test_submit_strips_the_cluster_from_job_ids_and_passes_sbatch_options_to_both_jobs(
    fake_slurm, tmp_path
):
    """`sbatch --parsable` may print "id;cluster": was "4241;cluster-a" put into the merge's
    dependency? Do SBATCH_EXTRA and the options after `--` reach both jobs, with the merge
    cancelled when a task fails and the logs appended under OUT_ROOT/logs, private?"""
    env, fake = fake_slurm
    env["SBATCH_EXTRA"] = "--account=ml101 --partition=short"
    p = _submit(env, "--", "--qos=exam", "--cpus-per-task=4")
    assert p.returncode == 0, p.stderr
    grade, merge = _calls(fake)
    logs = tmp_path / "graded" / "logs"
    for call in (grade, merge):
        for opt in ("--account=ml101", "--partition=short", "--qos=exam", "--cpus-per-task=4"):
            assert opt in call
        assert "--open-mode=append" in call and "umask=0077" in call
    assert f"--output={logs}/drills-grade-%A_%a.log" in grade and "--array=1-3" in grade
    assert f"--output={logs}/drills-merge-%j.log" in merge
    assert "--dependency=afterok:4241" in merge and "--kill-on-invalid-dep=yes" in merge
    assert "grading: job 4241 (array 1-3); merge: job 4242" in p.stdout
    assert oct(logs.stat().st_mode & 0o777) == "0o700"
    assert (logs / "jobs").read_text().split() == ["4241", "4242"]


def test_submit_hands_the_tasks_the_secret_instructors_export(fake_slurm, tmp_path):
    """docs/instructors.md tells instructors to export DRILLS_SECRET_FILE or DRILLS_SECRET; the
    recipe used to ignore both and look for $COURSE_DIR/course.secret. Do the tasks get them
    now?"""
    env, fake = fake_slurm
    del env["SECRET_FILE"]
    env["DRILLS_SECRET_FILE"] = "course.secret"  # relative to where submit.sh runs
    assert _submit(env, cwd=tmp_path).returncode == 0
    assert f"SECRET_FILE={tmp_path / 'course.secret'}" in _calls(fake)[0]
    (fake / "count").unlink()
    env["DRILLS_SECRET"] = "from-the-environment"  # drills reads it before DRILLS_SECRET_FILE
    (tmp_path / "graded" / "logs" / "jobs").unlink()
    assert _submit(env, cwd=tmp_path).returncode == 0
    assert "SECRET_FILE=" in _calls(fake)[0]  # empty: the task's drills reads $DRILLS_SECRET


@pytest.mark.parametrize(
    "change, says",
    [
        ({"SECRET_FILE": None}, "no course secret"),
        ({"SECRET_FILE": "/nonexistent/course.secret"}, "cannot read the secret file"),
        ({"SUBMITTED": "/nonexistent/submitted"}, "does not exist"),
        ({"COURSE_DIR": "/tmp"}, ".venv/bin/drills"),
        ({"SHARDS": "0"}, "positive whole number"),
    ],
    ids=["no-secret", "unreadable-secret", "no-submissions", "no-venv", "zero-shards"],
)
def test_submit_refuses_to_queue_what_every_task_would_fail_on(fake_slurm, change, says):
    """A missing secret, submissions or venv made every task fail within seconds and the merge
    hang: does submit.sh now refuse, saying what is missing, without calling sbatch?"""
    env, fake = fake_slurm
    for k, v in change.items():
        if v is None:
            env.pop(k)
        else:
            env[k] = v
    p = _submit(env)
    assert p.returncode == 2 and says in p.stderr, p.stderr
    assert _calls(fake) == []


def test_submit_refuses_while_the_previous_submission_still_runs(fake_slurm):
    """Two tasks grading one shard folder at once clash: with jobs of the previous submission
    into OUT_ROOT still queued, is nothing queued and the way out (wait or scancel) given?"""
    env, fake = fake_slurm
    assert _submit(env).returncode == 0
    (fake / "queue").write_text("4241_2 RUNNING\n")
    p = _submit(env)
    assert p.returncode == 2 and "scancel 4241 4242" in p.stderr, p.stderr
    assert (fake / "squeue-args").read_text().split()[-1] == "4241,4242"
    assert len(_calls(fake)) == 2
    (fake / "queue").unlink()  # they ended: the same command resubmits
    assert _submit(env).returncode == 0 and len(_calls(fake)) == 4


def _manifest(name: str) -> dict:
    (doc,) = list(yaml.safe_load_all((K8S / name).read_text()))
    return doc


DIGEST = "registry.example.edu/reward-drills@sha256:" + "ab" * 32


def _apply(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(K8S / "apply.sh"), *args],
        env=_env(**env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _rendered(shards: int = 3, jobs_only: bool = True, **env: str) -> list[dict]:
    """The manifests as deploy/k8s/apply.sh would apply them (the Jobs: grade, merge)."""
    p = _apply("--render", SHARDS=str(shards), IMAGE=DIGEST, **env)
    assert p.returncode == 0, p.stderr
    docs = list(yaml.safe_load_all(p.stdout))
    return [d for d in docs if d["kind"] == "Job"] if jobs_only else docs


def test_the_shard_count_is_set_in_one_place():
    """SHARDS given to apply.sh once: does it become the grading Job's completions and its
    pods' SHARDS, while the merge Job needs no count of its own (it was set by hand in three
    places, which could disagree)?"""
    grade, merge = _rendered(5)
    spec = grade["spec"]
    (container,) = spec["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert spec["completionMode"] == "Indexed" and spec["completions"] == 5
    assert env["SHARDS"] == "5" and "JOB_COMPLETION_INDEX" in container["args"][0]
    (merger,) = merge["spec"]["template"]["spec"]["containers"]
    assert "SHARDS" not in str(merger.get("env", "")) and "$SHARDS" not in merger["args"][0]
    assert (
        grade["metadata"]["name"] == "drills-grade" and merge["metadata"]["name"] == "drills-merge"
    )


def test_manifests_pass_the_kubernetes_schema_strictly():
    """Both rendered manifests against the Kubernetes API schema (kubernetes-validate, strict:
    an unknown or misspelt field fails), for the oldest and newest versions it ships; and does
    the check catch a misspelt field?"""
    kv = pytest.importorskip("kubernetes_validate", reason="pip install kubernetes-validate")
    docs = _rendered(jobs_only=False)
    assert [d["kind"] for d in docs] == ["NetworkPolicy", "Job", "Job"]
    for version in ("1.27.0", kv.latest_version()):
        for doc in docs:
            kv.validate(doc, version, strict=True)
    bad = dict(docs[1], spec=dict(docs[1]["spec"], completionz=3))
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, kv.latest_version(), strict=True)


def _seccomp_problems(profile: dict) -> list[str]:
    """RuntimeDefault, or Localhost naming a profile below the kubelet's seccomp folder."""
    if profile.get("type") not in ("RuntimeDefault", "Localhost"):
        return ["no RuntimeDefault or Localhost seccomp profile"]
    local = profile.get("localhostProfile")
    if (profile["type"] == "Localhost") != bool(local) or (
        local and (local.startswith("/") or ".." in local.split("/"))
    ):
        return ["a Localhost profile needs a relative localhostProfile, and only it"]
    return []


def _restricted_problems(doc: dict) -> list[str]:
    """What Pod Security "restricted" (Kubernetes' Pod Security Standards) would refuse in a
    Job's pod, plus this recipe's own rules: limits on every container, private secret mounts,
    no service-account token, a deadline and a retry limit that fail the Job."""
    problems = []
    spec, pod = doc["spec"], doc["spec"]["template"]["spec"]
    psc = pod.get("securityContext", {})
    for key in ("backoffLimit", "activeDeadlineSeconds"):
        if not isinstance(spec.get(key), int):
            problems.append(f"no {key}: a failing Job would never end")
    if pod.get("automountServiceAccountToken") is not False:
        problems.append("a service-account token is mounted")
    if pod.get("hostNetwork") or pod.get("hostPID") or pod.get("hostIPC"):
        problems.append("host namespaces")
    for c in pod.get("initContainers", []) + pod["containers"]:
        sc = {
            **{k: psc[k] for k in ("runAsNonRoot", "seccompProfile") if k in psc},
            **c.get("securityContext", {}),
        }
        name = c["name"]
        if sc.get("runAsNonRoot") is not True or sc.get("runAsUser", psc.get("runAsUser")) == 0:
            problems.append(f"{name}: may run as root")
        if sc.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{name}: the root filesystem is writable")
        if sc.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{name}: allowPrivilegeEscalation is not false")
        if sc.get("privileged"):
            problems.append(f"{name}: privileged")
        caps = sc.get("capabilities", {})
        if "ALL" not in caps.get("drop", []) or set(caps.get("add", [])) - {"NET_BIND_SERVICE"}:
            problems.append(f"{name}: capabilities are not all dropped")
        problems += [f"{name}: {p}" for p in _seccomp_problems(sc.get("seccompProfile", {}))]
        limits = c.get("resources", {}).get("limits", {})
        if not {"cpu", "memory"} <= set(limits):
            problems.append(f"{name}: no cpu and memory limits")
        if "@sha256:" not in c["image"] or c["image"].endswith("0" * 64):
            problems.append(f"{name}: image not pinned by digest")
    if "seccompProfile" in psc:
        problems += [f"pod: {p}" for p in _seccomp_problems(psc["seccompProfile"])]
    for v in pod.get("volumes", []):
        if "hostPath" in v:
            problems.append(f"volume {v['name']}: hostPath")
        if "secret" in v and v["secret"].get("defaultMode", 0o644) & 0o077:
            problems.append(f"volume {v['name']}: secret readable by others (defaultMode)")
    return problems


def test_rendered_jobs_meet_pod_security_restricted_and_fail_instead_of_hanging():
    """Would a namespace enforcing Pod Security "restricted" admit both Jobs, with limits on
    each, the secret mounted 0400, and a retry limit and deadline that fail them? And do the
    manifests as committed (the placeholder digest) fail the same check?"""
    for doc in _rendered():
        assert _restricted_problems(doc) == [], doc["metadata"]["name"]
    raw = _manifest("grade-indexed-job.yaml")
    assert any("digest" in p for p in _restricted_problems(raw))
    grade = _rendered()[0]["spec"]["template"]["spec"]
    (secret,) = [v for v in grade["volumes"] if "secret" in v]
    assert secret["secret"]["defaultMode"] == 0o400
    # and no network for either Job's pods
    policy = _rendered(jobs_only=False)[0]
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert "ingress" not in policy["spec"] and "egress" not in policy["spec"]
    wanted = policy["spec"]["podSelector"]["matchLabels"].items()
    for doc in _rendered():
        assert wanted <= doc["spec"]["template"]["metadata"]["labels"].items()


PROFILE = "drills-bwrap.json"  # the name seccomp/install-profile.yaml installs


def _seccomp(doc: dict) -> list[dict]:
    """A Job's seccompProfile settings: the pod's, then each container's."""
    pod = doc["spec"]["template"]["spec"]
    return [pod["securityContext"]["seccompProfile"]] + [
        c["securityContext"]["seccompProfile"] for c in pod["containers"]
    ]


def test_the_localhost_variant_meets_pod_security_restricted_and_names_the_profile():
    """SECCOMP_PROFILE given to apply.sh: do the grading pods (pod and container) run under
    that Localhost profile, still "restricted" and schema-valid, while the merge Job (no
    learner code) keeps the runtime's default, and without it does nothing change?"""
    grade, merge = _rendered(SECCOMP_PROFILE=PROFILE)
    local = {"type": "Localhost", "localhostProfile": PROFILE}
    assert _seccomp(grade) == [local, local]
    assert _seccomp(merge) == [{"type": "RuntimeDefault"}] * 2
    for doc in (grade, merge):
        assert _restricted_problems(doc) == [], doc["metadata"]["name"]
    default_grade, _ = _rendered()
    assert _seccomp(default_grade) == [{"type": "RuntimeDefault"}] * 2
    for where in ("pod", "grade"):  # the check sees a Localhost profile without its file
        broken = yaml.safe_load(yaml.safe_dump(grade))
        pod = broken["spec"]["template"]["spec"]
        sc = pod["securityContext"] if where == "pod" else pod["containers"][0]["securityContext"]
        del sc["seccompProfile"]["localhostProfile"]
        assert any(p.startswith(f"{where}: a Localhost") for p in _restricted_problems(broken))
    kv = pytest.importorskip("kubernetes_validate", reason="pip install kubernetes-validate")
    for version in ("1.27.0", kv.latest_version()):
        kv.validate(grade, version, strict=True)


def _installer() -> dict:
    p = _apply("--render-profile-installer", IMAGE=DIGEST)
    assert p.returncode == 0, p.stderr
    (doc,) = list(yaml.safe_load_all(p.stdout))
    return doc


def test_the_profile_installer_writes_the_named_file_into_the_kubelets_folder(tmp_path):
    """The DaemonSet that puts the profile on every node: schema-valid, pinned to IMAGE, the
    host's /var/lib/kubelet/seccomp its only host folder, and outside "restricted" only by
    running as root and by that hostPath (hence its own namespace)? Its script run here, as
    root with every capability dropped where this machine allows: is the ConfigMap's file
    installed under the name SECCOMP_PROFILE gives, 0644, with no temporary file left?"""
    doc = _installer()
    kv = pytest.importorskip("kubernetes_validate", reason="pip install kubernetes-validate")
    kv.validate(doc, kv.latest_version(), strict=True)
    assert doc["kind"] == "DaemonSet" and doc["metadata"]["namespace"] != "default"
    pod = doc["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == DIGEST
    hosts = [v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v]
    assert hosts == ["/var/lib/kubelet/seccomp"]
    problems = [p for p in _restricted_problems(doc) if not p.startswith("no ")]  # Job-only
    assert sorted(problems) == ["install: may run as root", "volume host-seccomp: hostPath"]
    # the script, with the volumes mapped to folders here and `sleep` a no-op
    profile, host, bin_ = tmp_path / "profile", tmp_path / "host", tmp_path / "bin"
    for folder in (profile, host, bin_):
        folder.mkdir()
    host.chmod(0o755)
    (profile / PROFILE).write_text('{"defaultAction": "SCMP_ACT_ERRNO"}\n')
    (bin_ / "sleep").write_text("#!/bin/sh\nexit 0\n")
    (bin_ / "sleep").chmod(0o755)
    script = container["args"][0].replace("/profile/", f"{profile}/")
    script = script.replace("/host-seccomp/", f"{host}/")
    prefix = []
    if os.geteuid() == 0 and shutil.which("setpriv"):
        prefix = ["setpriv", "--inh-caps=-all", "--bounding-set=-all"]
    p = subprocess.run(
        [*prefix, "bash", "-c", script], env=_env(PATH=f"{bin_}:/usr/bin:/bin"),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert (host / PROFILE).read_text() == (profile / PROFILE).read_text()
    assert (host / PROFILE).stat().st_mode & 0o777 == 0o644
    assert sorted(x.name for x in host.iterdir()) == [PROFILE]
    assert f"installed {host}/{PROFILE}" in p.stdout


@pytest.mark.parametrize(
    "env, says",
    [
        ({"SHARDS": "3", "IMAGE": "registry.example.edu/reward-drills:course-2025"}, "digest"),
        (
            {"SHARDS": "3", "IMAGE": "registry.example.edu/reward-drills@sha256:" + "0" * 64},
            "digest",
        ),
        ({"SHARDS": "three", "IMAGE": DIGEST}, "whole number"),
        ({"IMAGE": DIGEST}, "SHARDS"),
        (
            {"SHARDS": "3", "IMAGE": DIGEST, "SECCOMP_PROFILE": "/var/lib/kubelet/seccomp/p.json"},
            "SECCOMP_PROFILE",
        ),
        ({"SHARDS": "3", "IMAGE": DIGEST, "SECCOMP_PROFILE": "../p.json"}, "SECCOMP_PROFILE"),
    ],
)
def test_apply_refuses_a_tag_a_placeholder_digest_or_a_bad_shard_count(env, says, tmp_path):
    """Does apply.sh stop before calling kubectl, saying what is wrong?"""
    kubectl = _fake_kubectl(tmp_path, "Complete")
    p = _apply(KUBECTL=str(kubectl), **env)
    assert p.returncode != 0 and says in p.stderr, p.stderr
    assert not (tmp_path / "calls").exists()


def _fake_kubectl(folder: Path, grade_ends: str) -> Path:
    """A stand-in kubectl: logs each call to folder/calls, keeps what is applied, and lets
    `wait` for job/drills-grade's condition ``grade_ends`` (Complete or Failed) succeed at
    once while the other waits until killed; every condition of the merge Job completes."""
    fake = folder / "kubectl"
    fake.write_text(
        f"""#!/usr/bin/env bash
echo "$*" >> {folder}/calls
case "$1" in
  apply) echo --- >> {folder}/applied.yaml
     if [ "$3" = - ]; then cat; else cat "$3"; fi >> {folder}/applied.yaml ;;
  wait)
    want="${{2#--for=condition=}}"; job="${{4#job/}}"
    ends={grade_ends}
    [ "$job" = drills-merge ] && ends=Complete
    if [ "${{want,,}}" = "${{ends,,}}" ]; then exit 0; fi
    while :; do sleep 0.2; done ;;
esac
"""
    )
    fake.chmod(0o755)
    return fake


def test_apply_replaces_the_previous_jobs_waits_for_the_grade_and_then_merges(tmp_path):
    """A Job cannot be changed once created: does apply.sh delete the previous run's Jobs
    before applying (re-applying needed a `kubectl delete job` nobody was told about), wait
    until the grading Job completes, and only then apply the merge Job?"""
    kubectl = _fake_kubectl(tmp_path, "Complete")
    p = _apply(KUBECTL=str(kubectl), SHARDS="3", IMAGE=DIGEST)
    assert p.returncode == 0, p.stderr
    calls = [c.split()[0] for c in (tmp_path / "calls").read_text().splitlines()]
    assert calls[:3] == ["apply", "delete", "apply"] and calls.index("wait") > 2, calls
    applied = list(yaml.safe_load_all((tmp_path / "applied.yaml").read_text()))
    names = [d["metadata"]["name"] for d in applied]
    assert names == ["reward-drills-no-network", "drills-grade", "drills-merge"]


def test_a_failed_grading_job_ends_the_wait_and_is_not_merged(tmp_path):
    """The grading Job fails (its pods' retries or its deadline): does apply.sh stop at once
    with a failure naming the Job and what to do, instead of waiting hours for "complete",
    and leave the merge Job unapplied?"""
    kubectl = _fake_kubectl(tmp_path, "Failed")
    p = _apply(KUBECTL=str(kubectl), SHARDS="3", IMAGE=DIGEST, WAIT_TIMEOUT="7h")
    assert p.returncode == 1 and "job/drills-grade failed" in p.stderr, p.stderr
    applied = list(yaml.safe_load_all((tmp_path / "applied.yaml").read_text()))
    assert [d["metadata"]["name"] for d in applied] == ["reward-drills-no-network", "drills-grade"]


def test_dockerfile_pins_its_base_by_digest_and_the_build_context_leaves_out_secrets():
    """Is the base image pinned by a sha256 digest (a tag can move), and does .dockerignore
    keep the venv, submissions, outputs and secrets out of the build context while keeping
    everything the Dockerfile copies?"""
    steps = _dockerfile()
    (base,) = [a for i, a in steps if i == "FROM"]
    assert re.fullmatch(r"\S+@sha256:[0-9a-f]{64}", base), base
    ignored = [
        ln.strip()
        for ln in (ROOT / ".dockerignore").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    for must in (".venv", ".git", "submitted", "graded", "**/*.secret", "**/.drills-cache"):
        assert must in ignored, must
    copied = [src for i, a in steps if i == "COPY" for src in a.split()[:-1]]
    for src in copied:
        assert not any(Path(src).match(pattern) for pattern in ignored), src


def _dockerfile() -> list[tuple[str, str]]:
    """deploy/Dockerfile as (instruction, arguments), continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "deploy" / "Dockerfile").read_text())
    lines = [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    ]
    return [(ln.split(None, 1)[0].upper(), ln.split(None, 1)[1]) for ln in lines]


def _image_tree(where: Path) -> Path:
    """The image's WORKDIR as deploy/Dockerfile fills it (its COPY lines, from the repository),
    with the project's .venv standing in for the one the image builds there."""
    steps = _dockerfile()
    (workdir,) = [a for i, a in steps if i == "WORKDIR"]
    tree = where / workdir.lstrip("/")
    tree.mkdir(parents=True)
    for i, args in steps:
        if i == "COPY":
            *sources, dest = args.split()
            for src in sources:
                target = tree / dest / Path(src).name if dest.endswith("/") else tree / dest
                (shutil.copytree if (ROOT / src).is_dir() else shutil.copy)(ROOT / src, target)
    (tree / ".venv").symlink_to(VENV_BIN.parent)
    return tree


def test_container_image_is_the_one_the_manifests_run():
    """The manifests assume an image (workingDir, .venv/bin/drills, bash, bubblewrap, a user):
    does deploy/Dockerfile build that one, from paths that exist, without the secret?"""
    steps = _dockerfile()
    (workdir,) = [a for i, a in steps if i == "WORKDIR"]
    runs = " && ".join(a for i, a in steps if i == "RUN")
    assert "bubblewrap" in runs and "make .venv/.installed" in runs
    (user,) = [a for i, a in steps if i == "USER"]
    assert f"--uid {user}" in runs
    copied = [src for i, a in steps if i == "COPY" for src in a.split()[:-1]]
    for src in copied:
        assert (ROOT / src).exists(), (
            f"deploy/Dockerfile copies {src}, which is not in the repository"
        )
        assert "secret" not in src and src not in (".", "./")
    for name in ("grade-indexed-job.yaml", "merge-job.yaml"):
        pod = _manifest(name)["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        assert (
            container["image"]
            == _manifest("grade-indexed-job.yaml")["spec"]["template"]["spec"]["containers"][0][
                "image"
            ]
        )
        assert container["workingDir"] == workdir, name
        assert container["command"][0] == "bash"
        assert ".venv/bin/drills " in container["args"][0], name
        assert pod["securityContext"]["runAsUser"] == int(user), name


def test_image_tree_holds_what_grading_needs(tmp_path):
    """Copied as the Dockerfile copies it, can the course be found there (its source
    notebooks give the expected outcomes), and does `pip install -e .` find its readme?"""
    tree = _image_tree(tmp_path)
    assert (tree / "solutions" / A / f"{A}.ipynb").is_file()
    assert (tree / "exercises" / A / f"{A}.ipynb").is_file()
    readme = re.search(r'^readme = "(.+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert readme and (tree / readme[1]).is_file()
    p = subprocess.run(
        [
            ".venv/bin/python",
            "-c",
            "from autograder.notebooks import notebook; print(notebook.course_root())",
        ],
        cwd=tree,
        env=_env(DRILLS_COURSE_ROOT=str(tree)),
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0 and p.stdout.strip() == str(tree), p.stderr


@pytest.mark.slow
def test_indexed_job_pods_and_merge_grade_every_submission_once(course):
    """The container scripts run as pods 0..1 would, in the image's working folder as
    deploy/Dockerfile fills it (volume paths mapped to a temp folder), then the merge Job's
    script: the same gradebook as the Slurm recipe's?"""
    work = course / "k8s"
    (work / "course").mkdir(parents=True)
    shutil.copytree(course / "submitted", work / "course" / "submitted")
    (work / "secret").mkdir()
    shutil.copy(course / "course.secret", work / "secret" / "course.secret")
    tree = _image_tree(work / "image")

    def script(name: str) -> str:
        (container,) = _manifest(name)["spec"]["template"]["spec"]["containers"]
        text = container["args"][0].replace("/course/", f"{work}/course/")
        return text.replace("/secret/", f"{work}/secret/")

    pod = dict(SHARDS=str(N), DRILLS_COURSE_ROOT=str(tree))
    for index in range(N):
        _bash(script("grade-indexed-job.yaml"), _env(JOB_COMPLETION_INDEX=str(index), **pod), tree)
    _bash(script("merge-job.yaml"), _env(**pod), tree)
    merged = work / "course" / "graded" / "merged"
    assert sorted(p.name for p in (work / "course" / "graded").iterdir()) == [
        "merged",
        *[f"shard-{k}-of-{N}" for k in range(1, N + 1)],
    ]
    slurm = course / "slurm" / "merged"
    if slurm.is_dir():  # the Slurm test ran first in this module: same course, same secret
        assert _rows(merged) == _rows(slurm)
    assert [r.split(",")[3] for r in _rows(merged)[1:]] == ["ann", "ben", "cid"]
