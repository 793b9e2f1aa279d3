"""The batch recipes of deploy/ (README "Grading a large course"), run here by hand.

There is no Slurm and no Kubernetes on a test machine. What can be tried is tried: each
Slurm script runs under bash with the variables Slurm would set (SLURM_ARRAY_TASK_ID for
tasks 1..N), the Indexed Job's container script runs with JOB_COMPLETION_INDEX 0..N-1 (its
volume paths mapped to a temporary folder), the manifests are parsed as YAML and checked
for the fields an Indexed Job needs. Scheduling, volumes and images stay untried.
"""

from __future__ import annotations

import os
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

pytestmark = pytest.mark.slow


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


def test_slurm_array_tasks_and_merge_grade_every_submission_once(course):
    """grade-shard.sbatch as array tasks 1..2, then merge.sbatch: one gradebook with every
    submission once, each shard in its own folder?"""
    out = course / "slurm"
    common = dict(
        COURSE_DIR=str(ROOT),
        SHARDS=str(N),
        SUBMITTED=str(course / "submitted"),
        OUT_ROOT=str(out),
        SECRET_FILE=str(course / "course.secret"),
    )
    for k in range(1, N + 1):
        _bash(SLURM / "grade-shard.sbatch", _env(SLURM_ARRAY_TASK_ID=str(k), **common))
        assert (out / f"shard-{k}-of-{N}" / "run.json").is_file()
    _bash(SLURM / "merge.sbatch", _env(**common))
    rows = _rows(out / "merged")
    assert [r.split(",")[3] for r in rows[1:]] == ["ann", "ben", "cid"]


def test_slurm_task_outside_an_array_is_refused(course):
    """Run without SLURM_ARRAY_TASK_ID: does the script stop with a message, grading nothing?"""
    p = subprocess.run(
        ["bash", str(SLURM / "grade-shard.sbatch")],
        env=_env(COURSE_DIR=str(ROOT), SHARDS="3"),
        capture_output=True,
        text=True,
    )
    assert p.returncode != 0 and "job array" in p.stderr


def _manifest(name: str) -> dict:
    (doc,) = list(yaml.safe_load_all((K8S / name).read_text()))
    return doc


def test_indexed_job_manifest_is_an_indexed_job_with_one_index_per_shard():
    """Does the manifest parse, declare completionMode Indexed with completions equal to
    SHARDS, and read the pod's JOB_COMPLETION_INDEX? Is the merge Job's SHARDS the same?"""
    job = _manifest("grade-indexed-job.yaml")
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    spec = job["spec"]
    (container,) = spec["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert spec["completionMode"] == "Indexed" and spec["completions"] == int(env["SHARDS"])
    assert "JOB_COMPLETION_INDEX" in container["args"][0]
    (merge,) = _manifest("merge-job.yaml")["spec"]["template"]["spec"]["containers"]
    assert {e["name"]: e["value"] for e in merge["env"]}["SHARDS"] == env["SHARDS"]


def test_indexed_job_pods_and_merge_grade_every_submission_once(course):
    """The container scripts run as pods 0..1 would (volume paths mapped to a temp folder),
    then the merge Job's script: the same gradebook as the Slurm recipe's?"""
    work = course / "k8s"
    (work / "course").mkdir(parents=True)
    shutil.copytree(course / "submitted", work / "course" / "submitted")
    (work / "secret").mkdir()
    shutil.copy(course / "course.secret", work / "secret" / "course.secret")

    def script(name: str) -> str:
        (container,) = _manifest(name)["spec"]["template"]["spec"]["containers"]
        text = container["args"][0].replace("/course/", f"{work}/course/")
        return text.replace("/secret/", f"{work}/secret/").replace(".venv/bin/", f"{VENV_BIN}/")

    for index in range(N):
        _bash(
            script("grade-indexed-job.yaml"), _env(JOB_COMPLETION_INDEX=str(index), SHARDS=str(N))
        )
    _bash(script("merge-job.yaml"), _env(SHARDS=str(N)))
    merged = work / "course" / "graded" / "merged"
    assert sorted(p.name for p in (work / "course" / "graded").iterdir()) == [
        "merged",
        *[f"shard-{k}-of-{N}" for k in range(1, N + 1)],
    ]
    slurm = course / "slurm" / "merged"
    if slurm.is_dir():  # the Slurm test ran first in this module: same course, same secret
        assert _rows(merged) == _rows(slurm)
    assert [r.split(",")[3] for r in _rows(merged)[1:]] == ["ann", "ben", "cid"]
