"""deploy/slurm/ against a real Slurm: docs/large-courses.md's checklist, followed by an instructor.

Where the machine allows it (root, and Debian's ``slurm-wlm`` and ``munge``, which ``.ci/run``
installs), the test starts munged, slurmctld and slurmd with a throw-away configuration (one
node, everything in a temporary folder, its own munge key and ports), and, as an unprivileged
user (``drills-slurm``, created here if missing), queues a small class with
``deploy/slurm/submit.sh``, cancels one array task, checks that Slurm cancelled the merge
instead of leaving it pending, recovers as docs/large-courses.md says (run submit.sh again) and
compares the merged grades.csv with an unsharded ``drills grade`` byte for byte; then it requeues
a finished task and checks that its log kept the first attempt. Every daemon it started is
stopped by pid, whatever happens. Elsewhere it skips and says why. It waits on job states
(squeue; there is no accounting database for sacct) with deadlines, never fixed sleeps.

The user runs a copy of the course they can read (tests/unprivileged.py builds it). Their
grading must use warm workers, as root's does: the test reads how many jobs ran warm from
the run's statistics.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import nbformat
import nbgrader_course
import pytest
from unprivileged import USER, as_user, ensure_user, readable_course

pytestmark = pytest.mark.slow

A = "01_exact_kl"
N = 3
STUDENTS = {
    "ann": "solution",
    "ben": "stub",
    "cid": "mistakes-1",
    "dee": "solution",
    "eve": "mistakes-2",
    "fay": "solution",
}
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo")
# A task or job that reached one of these is over (squeue --states=all shows them until MinJobAge).
ENDED = {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY"}


def _which(name: str) -> str | None:
    """``name`` on PATH or in the sbin folders (where the daemons are; not always on PATH)."""
    return shutil.which(name, path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")


def _why_not() -> str | None:
    if sys.platform != "linux":
        return "a real Slurm is started only on Linux"
    if os.geteuid() != 0:
        return "starting munged, slurmctld and slurmd needs root (run as root, e.g. by .ci/run)"
    missing = [p for p in (*DAEMONS, *CLIENTS, "useradd", "runuser", "getent") if _which(p) is None]
    if missing:
        return f"not installed: {', '.join(missing)} (Debian: apt-get install slurm-wlm munge)"
    return None


def _run(args: list[str], timeout: float = 60, check: bool = True, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"{args} exited {p.returncode}:\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    return p


def _wait(what: str, probe: Callable[[], object], deadline_s: float, detail=lambda: "") -> object:
    """Poll ``probe`` until it returns something true; fail saying what was awaited."""
    end = time.monotonic() + deadline_s
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"waited {deadline_s:.0f} s for {what}; {detail()}")
        time.sleep(0.2)


# -- a throw-away Slurm ------------------------------------------------------------------------


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _slurm_conf(top: Path) -> Path:
    host = socket.gethostname().split(".")[0]
    ctld, slurmd = _free_ports(2)
    for d in ("state", "spool", "log"):
        (top / d).mkdir()
    conf = top / "slurm.conf"
    conf.write_text(
        f"""# a throw-away single-node cluster for tests/test_slurm_real.py
ClusterName=drillstest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# cred_expire: also how long a requeued job waits before it may start again (default 120 s)
AuthInfo=socket={top}/munge/munge.socket,cred_expire=10
CredType=cred/munge
StateSaveLocation={top}/state
SlurmdSpoolDir={top}/spool
SlurmctldPidFile={top}/slurmctld.pid
SlurmdPidFile={top}/slurmd.pid
SlurmctldLogFile={top}/log/slurmctld.log
SlurmdLogFile={top}/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MinJobAge=3600
# Scheduling passes every second instead of Slurm's 30 s (backfill) and 60 s (main loop): a
# requeued task, eligible again after cred_expire, waited for the next backfill pass (the
# requeue took 30 s of the test's 70). Cluster settings, not the recipe's: the recipe's jobs and
# dependencies behave the same, only sooner.
SchedulerParameters=bf_interval=1,sched_interval=1
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
    )
    conf.chmod(0o644)
    return conf


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


@contextlib.contextmanager
def _slurm(top: Path) -> Iterator[dict[str, str]]:
    """munged, slurmctld and slurmd in the foreground (pids known), stopped on the way out."""
    top.mkdir(mode=0o755)
    munge = top / "munge"
    munge.mkdir(mode=0o755)
    key = munge / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    conf = _slurm_conf(top)
    env = dict(os.environ, SLURM_CONF=str(conf))
    procs: list[subprocess.Popen] = []

    def start(args: list[str], name: str) -> None:
        log = open(top / "log" / f"{name}.out", "w")  # noqa: SIM115 (closed with the process)
        procs.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env))
        log.close()

    def logs() -> str:
        return "\n".join(
            f"--- {p.name}:\n" + p.read_text()[-2000:] for p in sorted((top / "log").glob("*"))
        )

    try:
        start(
            [_which("munged"), "--foreground", f"--socket={munge}/munge.socket",
             f"--key-file={key}", f"--pid-file={munge}/munged.pid",
             f"--seed-file={munge}/munged.seed", f"--log-file={top}/log/munged.log"],
            "munged",
        )  # fmt: skip
        _wait("munged's socket", lambda: (munge / "munge.socket").exists(), 30, logs)
        start([_which("slurmctld"), "-D", "-c", "-f", str(conf)], "slurmctld")
        start([_which("slurmd"), "-D", "-f", str(conf)], "slurmd")

        def idle() -> bool:
            for p in procs:
                assert p.poll() is None, f"{p.args[0]} exited {p.returncode}\n{logs()}"
            r = _run(["sinfo", "-h", "-o", "%T"], env=env, check=False)
            return r.returncode == 0 and r.stdout.strip() == "idle"

        _wait("the node to be idle (sinfo)", idle, 60, logs)
        yield env
    finally:
        with contextlib.suppress(Exception):
            left = _run(["squeue", "-h", "-o", "%A"], env=env, check=False).stdout.split()
            if left:
                _run(["scancel", *sorted(set(left))], env=env, check=False)
                _wait(
                    "the cancelled jobs to leave the queue",
                    lambda: not _run(["squeue", "-h"], env=env, check=False).stdout.strip(),
                    60,
                )
        for p in reversed(procs):
            _stop(p)


# -- the instructor's side ---------------------------------------------------------------------


def _tasks(env: dict[str, str], job: str) -> dict[str, str]:
    """{task or job id: state} of ``job`` and its array tasks, ended ones included."""
    r = _run(["squeue", "-h", "-r", "--states=all", "-j", job, "-o", "%i|%T"], env=env, check=False)
    return dict(line.split("|", 1) for line in r.stdout.split() if "|" in line)


def _submit(user_env: dict[str, str], work: Path) -> tuple[str, str]:
    # the instructor's checkout (COURSE_DIR) holds the recipe; options for a small node
    submit = Path(user_env["COURSE_DIR"]) / "deploy" / "slurm" / "submit.sh"
    options = ["--cpus-per-task=1", "--mem=200M", "--time=00:20:00"]
    r = as_user(["bash", str(submit), "--", *options], user_env, work)
    assert r.returncode == 0, f"submit.sh refused or failed:\n{r.stdout}{r.stderr}"
    m = re.search(r"grading: job (\d+) \(array 1-(\d+)\); merge: job (\d+)", r.stdout)
    assert m and m[2] == str(N), r.stdout
    return m[1], m[3]


def _cancel_one_task(env, user_env, work: Path, grade: str) -> tuple[str, str]:
    """scancel, as the user, a task of array ``grade`` while it runs (or, if every task that
    ran has finished first, one still pending). Returns (task id, its state afterwards)."""
    while True:
        states = _wait(
            f"a task of array {grade} to run or wait (squeue)",
            lambda: {
                t: s
                for t, s in _tasks(env, grade).items()
                if "_" in t and s in ("RUNNING", "PENDING")
            },
            120,
            lambda: f"states: {_tasks(env, grade)}",
        )
        running = [t for t, s in states.items() if s == "RUNNING"]
        task = (running or sorted(states))[0]
        as_user(["scancel", task], user_env, work)

        def ended(task: str = task) -> str | None:
            state = _tasks(env, grade).get(task, "GONE")  # a pending task cancelled: no record
            return state if state in ENDED | {"GONE"} else None

        final = _wait(
            f"task {task} to end after scancel", ended, 60, lambda: str(_tasks(env, grade))
        )
        if final != "COMPLETED":  # else it finished before the scancel: try another
            assert final in ("CANCELLED", "GONE"), f"{task} ended {final} after scancel"
            return task, final


def _isolation(out: Path) -> str:
    return json.loads((out / "run.json").read_text())["settings"]["isolation"]


def test_cancelled_task_on_real_slurm_cancels_the_merge_and_resubmitting_recovers_the_gradebook():
    """A cancelled array task used to leave the merge pending forever (DependencyNeverSatisfied):
    is the merge now cancelled by Slurm, does running submit.sh again (as docs/large-courses.md
    says) give the same grades.csv as one unsharded run, and are the logs private under
    OUT_ROOT?"""
    why = _why_not()
    if why:
        pytest.skip(why)
    ensure_user()
    top = Path(tempfile.mkdtemp(prefix="drills-slurm-"))
    try:
        top.chmod(0o755)
        t0 = time.monotonic()
        course = readable_course(top)
        work = top / "work"  # the instructor's: submissions, secret, outputs, outcome cache
        for student, kind in STUDENTS.items():
            folder = work / "submitted" / student / A
            folder.mkdir(parents=True)
            nb = nbgrader_course.learner_notebook(A, kind, student, secret="slurm-test-secret")
            nbformat.write(nb, str(folder / f"{A}.ipynb"))
        (work / "course.secret").write_text("slurm-test-secret\n")
        (work / "home").mkdir()
        _run(["chown", "-R", f"{USER}:", str(work)])
        work.chmod(0o700)
        (work / "course.secret").chmod(0o600)
        user_env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "HOME": str(work / "home"),
            "LANG": "C.UTF-8",
            "COURSE_DIR": str(course),
            "SHARDS": str(N),
            "SUBMITTED": str(work / "submitted"),
            "OUT_ROOT": str(work / "graded"),
            "DRILLS_SECRET_FILE": str(work / "course.secret"),
            "DRILLS_CACHE_DIR": str(work / "outcome-cache"),
        }
        # the unsharded reference, by the same user outside Slurm
        env1 = {k: v for k, v in user_env.items() if k not in ("SHARDS", "SUBMITTED", "OUT_ROOT")}
        r = as_user(
            [str(course / ".venv" / "bin" / "drills"), "grade", str(work / "submitted"),
             "--out", str(work / "whole"), "--jobs", "2"],
            env1,
            work,
            timeout=600,
        )  # fmt: skip
        assert r.returncode == 0, f"unsharded drills grade as {USER} failed:\n{r.stdout}{r.stderr}"
        bwrap_works = (
            subprocess.run(
                [_which("runuser"), "-u", USER, "--", "bwrap", "--unshare-all", "--ro-bind", "/", "/",
                 "true"],
                capture_output=True,
            ).returncode
            == 0
        )  # fmt: skip
        t_setup = time.monotonic() - t0

        with _slurm(top / "slurm") as env:
            user_env["SLURM_CONF"] = env["SLURM_CONF"]
            t1 = time.monotonic()
            grade, merge = _submit(user_env, work)

            cancelled, how = _cancel_one_task(env, user_env, work, grade)
            _wait(
                f"Slurm to cancel merge job {merge} (its afterok can no longer be satisfied)",
                lambda: _tasks(env, merge).get(merge) == "CANCELLED",
                60,
                lambda: f"merge: {_tasks(env, merge)}; array: {_tasks(env, grade)}",
            )
            _wait(
                f"the other tasks of array {grade} to end",
                lambda: not any(s not in ENDED for s in _tasks(env, grade).values()),
                300,
                lambda: f"states: {_tasks(env, grade)}",
            )
            assert not (work / "graded" / "merged").exists()
            t_first = time.monotonic() - t1

            # docs/large-courses.md's recovery: run submit.sh again; every shard resumes from
            # its cache.
            t2 = time.monotonic()
            grade2, merge2 = _submit(user_env, work)
            logs = work / "graded" / "logs"
            _wait(
                f"merge job {merge2} to complete",
                lambda: _tasks(env, merge2).get(merge2) in ENDED,
                300,
                lambda: f"merge: {_tasks(env, merge2)}; array: {_tasks(env, grade2)}",
            )
            merge_log = (logs / f"drills-merge-{merge2}.log").read_text()
            assert _tasks(env, merge2)[merge2] == "COMPLETED", merge_log
            t_recover = time.monotonic() - t2

            # A requeued task (preempted, or `scontrol requeue`) appends to its log.
            t3 = time.monotonic()
            task = f"{grade2}_1"
            log = logs / f"drills-grade-{task}.log"
            r = as_user(["scontrol", "requeue", task], user_env, work)
            assert r.returncode == 0, r.stderr
            _wait(
                f"requeued task {task} to run again and complete",
                lambda: (
                    "restart 1," in log.read_text() and _tasks(env, grade2).get(task) == "COMPLETED"
                ),
                180,
                lambda: f"states: {_tasks(env, grade2)}; log: {log.read_text()[-1500:]}",
            )
            assert f"shard 1/{N} on" in log.read_text().split("restart 1,")[0], log.read_text()
            t_requeue = time.monotonic() - t3

        merged = work / "graded" / "merged" / "grades.csv"
        assert merged.read_bytes() == (work / "whole" / "grades.csv").read_bytes()
        assert len(merged.read_text().splitlines()) == 1 + len(STUDENTS)
        # the jobs sandboxed as the user's own run did: with bubblewrap where it works
        shards = {_isolation(work / "graded" / f"shard-{k}-of-{N}") for k in range(1, N + 1)}
        assert shards == {_isolation(work / "whole")}
        assert shards == {"bwrap"} or not bwrap_works
        # ... and in warm workers, as root's runs do (a batch of two or more; one submission
        # is graded cold by design): the zygote's probe passed for the user
        if bwrap_works:
            runs = [work / "whole"] + [
                work / "graded" / f"shard-{k}-of-{N}" for k in range(1, N + 1)
            ]
            for out in runs:
                manifest = json.loads((out / "run.json").read_text())
                pool = manifest["warm_workers"]
                if manifest["stats"]["graded"] >= 2:
                    assert pool["unavailable"] is None and pool["cold_jobs"] == 0, (out, pool)
                    assert pool["warm_jobs"] >= manifest["stats"]["graded"], (out, pool)
            assert json.loads((work / "whole" / "run.json").read_text())["stats"]["graded"] == len(
                STUDENTS
            )
        if how == "CANCELLED":  # it had started: its log is kept and says so
            assert "CANCELLED" in (logs / f"drills-grade-{cancelled}.log").read_text()
        # logs: under OUT_ROOT/logs, private, one per task and attempt; the cancelled one kept
        assert stat.S_IMODE(logs.stat().st_mode) == 0o700
        names = sorted(p.name for p in logs.glob("*.log"))
        for k in range(1, N + 1):
            assert f"drills-grade-{grade2}_{k}.log" in names, names
        for p in logs.glob("*.log"):
            assert stat.S_IMODE(p.stat().st_mode) & 0o077 == 0, f"{p} is readable by others"
        print(
            f"\nreal Slurm: setup {t_setup:.1f} s, first submission until cancelled "
            f"{t_first:.1f} s (cancelled {cancelled}), recovery {t_recover:.1f} s, "
            f"requeue {t_requeue:.1f} s"
        )
    finally:
        shutil.rmtree(top, ignore_errors=True)
