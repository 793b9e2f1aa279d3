"""The grading pods' Localhost seccomp profile (deploy/k8s/seccomp/bwrap_profile.py) lets
bubblewrap start where the runtime's default stops it, and changes nothing else.

There is no cluster here. A pod is emulated (tests/oci_seccomp.py): CAP_SYS_ADMIN dropped with
setpriv and an OCI seccomp profile loaded through libseccomp, as runc would load it. The
"runtime default" is :func:`oci_seccomp.runtime_default`, written for these tests, moby-like and not moby's file:
defaultAction SCMP_ACT_ERRNO (EPERM); every x86_64 system call allowed except those moby's
default leaves to a capability or does not list (mount, namespace and new-mount-API calls,
pivot_root, modules, kexec, clock setting, tracing, keyrings, swap, ...); moby's namespace
rules as its profile states them: the CAP_SYS_ADMIN calls allowed only with that capability,
``clone`` without it only when its flags masked with 0x7E020000 (the namespace flags) are 0,
``clone3`` ENOSYS without it. Its conditions are Docker-format ``includes``/``excludes``,
evaluated by the launcher for a process with no capability.

- under it, bubblewrap cannot start, and `drills grade` with a course secret falls back to
  running learner code as its own user and so refuses the secret, saying bubblewrap "failed
  to start a sandbox" (as tests/test_secret_reach.py's namespace-less case);
- under the profile bwrap_profile.py writes from it, bubblewrap starts (as root without
  CAP_SYS_ADMIN, and as an unprivileged uid holding no capability, the pod's case), and
  `drills grade` grades two copies of the reference solution in bubblewrap, warm workers
  included, with full marks and the secret not refused; calls outside the five still fail
  as under the default;
- the profile differs from its input only in the rules for those five calls (pure JSON);
- what it does not lift: with /proc masked as a container runtime masks it, bubblewrap still
  cannot mount the sandbox's own /proc. `drills grade` then grades in "bwrap-noproc" (the same
  sandbox, its /proc a read-only tmpfs holding only cpuinfo): the seven solution notebooks get
  full marks with a private secret, a graded cell hunting the secret (environment, every
  /proc/*/environ, cmdline and mem, files, other processes, a proc mount of its own) finds
  nothing and each answer-key attack scores no more than the stub; binding the container's
  /proc instead (rejected) would show the learner the pod's processes and command lines.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import oci_seccomp
import podman_runtime
import pytest
from conftest import ROOT, run_drills
from oci_seccomp import ADMIN_CALLS, runtime_default

GENERATOR = ROOT / "deploy" / "k8s" / "seccomp" / "bwrap_profile.py"
SOLUTION = ROOT / "solutions" / "01_exact_kl" / "01_exact_kl.ipynb"
SECRET = "k8s-seccomp-secret-4242"
REFUSED = "refusing to grade with the course secret"
NOT_STARTED = "failed to start a sandbox"
BWRAP_CALLS = ("clone", "mount", "pivot_root", "umount2", "unshare")


def _generator():
    spec = importlib.util.spec_from_file_location("bwrap_profile", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _per_call(profile: dict, keep=lambda rule: True) -> dict[str, list]:
    """name -> its rules (action, errno, args), in order, of the rules ``keep`` admits."""
    calls: dict[str, list] = {}
    for rule in profile["syscalls"]:
        if keep(rule):
            what = (rule["action"], rule.get("errnoRet"), json.dumps(rule.get("args")))
            for name in rule["names"]:
                calls.setdefault(name, []).append(what)
    return calls


# a few names for the pure-JSON test: any list will do, the restricted ones are held back
SOME_CALLS = ["read", "write", "openat", "close", "mmap", "execve", "wait4", "pipe2", "prctl"]


def test_the_generated_profile_differs_from_its_input_only_in_bwraps_calls(capsys, tmp_path):
    """Written from the runtime default: is every system call other than the five ruled
    exactly as the runtime would rule it for a pod with no capability (the input's
    includes/excludes evaluated by the launcher, independently of the generator), the five
    allowed by one unconditional rule and no other, no condition left for containerd to drop,
    and are the changes printed?"""
    gen = _generator()
    src = runtime_default(SOME_CALLS + ADMIN_CALLS + ["clone3"])
    (tmp_path / "default.json").write_text(json.dumps(src))
    out_path = tmp_path / "drills-bwrap.json"
    assert gen.main([str(tmp_path / "default.json"), "-o", str(out_path), "--arch", "x86_64"]) == 0
    out = json.loads(out_path.read_text())
    said = capsys.readouterr().err

    assert {k: out[k] for k in ("defaultAction", "defaultErrnoRet")} == {
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": 1,
    }
    assert out["architectures"] == ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"]
    assert all(set(rule) <= {"names", "action", "errnoRet", "args"} for rule in out["syscalls"])
    before = _per_call(src, oci_seccomp.applies)
    after = _per_call(out)
    for name in set(before) | set(after):
        if name in BWRAP_CALLS:
            assert after[name] == [("SCMP_ACT_ALLOW", None, "null")], name
        else:
            assert after.get(name) == before.get(name), name
    assert before["clone"] == [("SCMP_ACT_ALLOW", None, json.dumps(src["syscalls"][5]["args"]))]
    assert "pivot_root" not in before and "mount" not in before  # refused by the default
    assert after["clone3"] == [("SCMP_ACT_ERRNO", 38, "null")]
    assert "setns" not in after and "setns" not in before  # refused by the default, still
    assert "ptrace" in after and "kcmp" not in after  # minKernel met; CAP_SYS_PTRACE not held
    # what was changed is said, and nothing else
    changed = said.split("changed for bubblewrap:")[1].strip().splitlines()
    assert len(changed) == 2 and "clone" in changed[0] and "MASKED_EQ" in changed[0], said
    assert "clone,mount,pivot_root,umount2,unshare" in changed[1], said
    # the output is its own fixed point: generating again changes nothing
    again, _ = gen.with_bwrap(gen.resolve(out, "x86_64", frozenset(), "6.1")[0])
    assert again == out


def _why_no_pod() -> str | None:
    why = oci_seccomp.why_not()
    if why is None and shutil.which("bwrap") is None:
        why = "bubblewrap is not installed"
    return why


def _profiles(tmp_path: Path) -> tuple[Path, Path]:
    """(the runtime default, the generated Localhost profile), written to tmp_path."""
    why = _why_no_pod()
    if why:
        pytest.skip(why)
    default = tmp_path / "runtime-default.json"
    default.write_text(json.dumps(runtime_default(oci_seccomp.syscall_names())))
    local = tmp_path / "drills-bwrap.json"
    p = subprocess.run(
        [sys.executable, str(GENERATOR), str(default), "-o", str(local)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return default, local


def _run(profile: Path, argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        oci_seccomp.command(profile, argv), capture_output=True, text=True, timeout=60
    )


BWRAP = ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"]
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
AS_NOBODY += ["--inh-caps=-all", "--bounding-set=-all"]
# setns(-1, 0) and clone3(NULL, 0): EPERM and ENOSYS from the filter (the kernel: EBADF, EINVAL)
ERRNOS = (
    "import ctypes; c = ctypes.CDLL(None, use_errno=True); out = []\n"
    "for nr, args in ((308, (-1, 0)), (435, (None, 0))):\n"
    "    c.syscall(nr, *args); out.append(ctypes.get_errno())\n"
    "print(*out)"
)


def _submissions(folder: Path, n: int = 2) -> Path:
    for k in range(n):
        target = folder / "submitted" / f"student{k}" / "01_exact_kl"
        target.mkdir(parents=True)
        shutil.copy(SOLUTION, target / SOLUTION.name)
    return folder / "submitted"


def _secret(folder: Path) -> Path:
    path = folder / "course.secret"
    path.write_text(SECRET + "\n")
    path.chmod(0o600)
    return path


def _grade_under(profile, tmp_path, out):
    """`drills grade` of the reference submissions with a private secret, under ``profile``."""
    return run_drills(
        "grade", str(_submissions(tmp_path)), "--out", str(out), "--secret-file",
        str(_secret(tmp_path)), timeout=300, prefix=oci_seccomp.command(profile, []),
        DRILLS_SANDBOX_UID="keep",
    )  # fmt: skip


@pytest.mark.slow
def test_under_the_runtime_default_bubblewrap_fails_and_the_secret_is_refused(tmp_path):
    """The pod as it is today: does bubblewrap fail (and `unshare -U`), while an ordinary
    program runs (else the refusal below would prove nothing), and does `drills grade` with a
    secret fall back, say bubblewrap failed to start, and refuse the secret?"""
    default, _ = _profiles(tmp_path)
    for argv in (BWRAP, [*AS_NOBODY, *BWRAP], ["unshare", "-U", "true"]):
        p = _run(default, argv)
        assert p.returncode != 0, f"{argv} started a namespace under the default"
    p = _run(default, [sys.executable, "-c", ERRNOS])
    assert p.returncode == 0 and p.stdout.split() == ["1", "38"], p.stdout + p.stderr
    out = tmp_path / "out"
    p = _grade_under(default, tmp_path, out)
    assert p.returncode == 2 and REFUSED in p.stderr, p.stdout + p.stderr
    assert NOT_STARTED in p.stderr, p.stderr
    assert not (out / "results.json").exists()


@pytest.mark.slow
def test_under_the_generated_profile_bubblewrap_starts_and_grades_with_the_secret(tmp_path):
    """The pod under the Localhost profile: does bubblewrap start, as root without
    CAP_SYS_ADMIN and as an unprivileged uid with no capability, do other calls still fail
    as under the default, and does `drills grade` with a private secret grade two reference
    solutions in bubblewrap (warm workers too) with full marks, the secret nowhere?"""
    _, local = _profiles(tmp_path)
    for argv in (BWRAP, [*AS_NOBODY, *BWRAP]):
        p = _run(local, argv)
        assert p.returncode == 0, f"{argv}: {p.stderr}"
    p = _run(local, [sys.executable, "-c", ERRNOS])
    assert p.returncode == 0 and p.stdout.split() == ["1", "38"], p.stdout + p.stderr
    out = tmp_path / "out"
    p = _grade_under(local, tmp_path, out)
    assert p.returncode == 0, p.stdout + p.stderr
    assert NOT_STARTED not in p.stderr and REFUSED not in p.stderr, p.stderr
    text = (out / "results.json").read_text()
    results = json.loads(text)
    assert results["isolation"]["mode"] == "bwrap", results["isolation"]
    assert [s["score"] for s in results["submissions"]] == [7.0, 7.0]
    assert SECRET not in text
    warm = json.loads((out / "run.json").read_text())["warm_workers"]
    assert warm["warm_jobs"] > 0 and warm["worker_failures"] == 0, warm


# /proc as a runtime leaves it in a container: runc applies the OCI spec's readonlyPaths
# (/proc/sys, ... bound read-only onto themselves) and maskedPaths (/proc/acpi, ... under an
# empty read-only tmpfs; files under /dev/null). Two of them, in a new mount and pid namespace
# with its own /proc, as runc makes a container's.
MASK_PROC = (
    "mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && "
    '{ [ ! -d /proc/acpi ] || mount -t tmpfs -o ro tmpfs /proc/acpi; } && exec "$@"'
)


def _masked(argv: list[str]) -> list[str]:
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    return ["unshare", "--mount", "--pid", "--fork", "--mount-proc", "sh", "-c", MASK_PROC,
            "mask-proc", *argv]  # fmt: skip


def _pod_grade(tmp_path: Path, submitted: Path, local: Path) -> subprocess.CompletedProcess:
    """`drills grade` with a private (0600) course secret in the emulated restricted pod:
    /proc masked, the Localhost profile, no CAP_SYS_ADMIN; children run as its own uid."""
    secret = _secret(tmp_path)
    return run_drills(
        "grade", str(submitted), "--out", str(tmp_path / "out"), "--secret-file", str(secret),
        "--jobs", "2", timeout=600, prefix=_masked(oci_seccomp.command(local, [])),
        DRILLS_SANDBOX_UID="keep", DRILLS_SECRET_FILE=str(secret),
    )  # fmt: skip


@pytest.mark.slow
def test_with_proc_masked_as_in_a_container_the_seven_solutions_grade_without_their_own_proc(
    tmp_path,
):
    """With /proc masked as runc masks a container's (Pod Security "restricted" keeps
    procMount Default), the kernel refuses bubblewrap a new /proc even under the Localhost
    profile. Does bubblewrap say so (and start without its own /proc, so seccomp is not what
    stops it), and does `drills grade` then use "bwrap-noproc", say so, keep the 0600 secret
    (not refused) and give each of the seven solution notebooks full marks, in cold
    children (a warm zygote mounts a /proc per job)?"""
    podman_runtime.skip_emulation_where_real("the masked-/proc grading of the solutions")
    _, local = _profiles(tmp_path)
    p = subprocess.run(
        _masked(oci_seccomp.command(local, [*BWRAP[:-1], "--proc", "/proc", "true"])),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode != 0 and "Can't mount proc" in p.stderr, p.stderr
    p = subprocess.run(
        _masked(oci_seccomp.command(local, BWRAP)), capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    for a in ASSIGNMENTS:
        target = tmp_path / "submitted" / "reference" / a
        target.mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / a / f"{a}.ipynb", target)
    p = _pod_grade(tmp_path, tmp_path / "submitted", local)
    assert p.returncode == 0, p.stdout + p.stderr
    assert REFUSED not in p.stderr and NOT_STARTED not in p.stderr, p.stderr
    assert "bwrap-noproc" in p.stderr and "masked" in p.stderr, p.stderr
    text = (tmp_path / "out" / "results.json").read_text()
    results = json.loads(text)
    assert results["isolation"]["mode"] == "bwrap-noproc", results["isolation"]
    assert results["secret"] == "course secret"
    scores = {s["assignment"]: (s["score"], s["max_score"]) for s in results["submissions"]}
    assert sorted(scores) == ASSIGNMENTS
    assert all(got == full > 0 for got, full in scores.values()), scores
    assert SECRET not in text
    # torch found the processors (its /proc/cpuinfo), as in "bwrap": no complaint from cpuinfo
    said = [s["child"]["stderr"] for s in results["submissions"]]
    assert not any("Error in cpuinfo" in x for x in said), said
    warm = json.loads((tmp_path / "out" / "run.json").read_text())["warm_workers"]
    assert warm["warm_jobs"] == 0 and "own /proc" in warm["unavailable"], warm


ASSIGNMENTS = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.name[:2].isdigit())
A07 = "07_beyond_nthr"
SOLUTION_07 = ROOT / "solutions" / A07 / f"{A07}.ipynb"

# Every way to the secret a child without its own /proc might try: its own environment, every
# process's environ, cmdline and memory through whatever /proc it has, the secret's file by its
# path, the solutions and the course folder; then a proc mount of its own, in its namespaces or
# in a new user namespace. ``found`` names each thing it reached (a process other than itself
# counts: it must see none).
HUNT = """
def _hunt(secret, paths):
    import ctypes, os
    found, me = [], str(os.getpid())
    for k, v in os.environ.items():
        if "DRILLS" in k or secret in v:
            found.append("environment " + k)
    for path in paths:
        try:
            if os.path.isdir(path):
                found.append("listed " + path + " " + ",".join(os.listdir(path)[:4]))
            else:
                with open(path, "rb") as f:
                    found.append("read " + path + " " + repr(f.read(40)))
        except OSError:
            pass
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit() and d != me]
    except OSError:
        pids = []
    for pid in pids:
        found.append("process " + pid)
        for what in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as f:
                    text = f.read().decode(errors="replace")
                found.append(f"{what} of {pid}: {text.replace(chr(0), ' ')[:200]}")
            except OSError:
                pass
        try:
            with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
                for line in maps:
                    lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                    if "r" in line.split()[1] and hi - lo < 1 << 26:
                        try:
                            mem.seek(lo)
                            if secret.encode() in mem.read(hi - lo):
                                found.append(f"memory of {pid}")
                        except (OSError, ValueError, OverflowError):
                            pass
        except OSError:
            pass
    c = ctypes.CDLL(None, use_errno=True)
    os.makedirs("/tmp/hunt-proc", exist_ok=True)
    if c.mount(b"proc", b"/tmp/hunt-proc", b"proc", 0, None) == 0:
        found.append("mounted a proc: " + ",".join(os.listdir("/tmp/hunt-proc")[:8]))
    if c.unshare(0x10000000) == 0:
        found.append("made a user namespace")
    print("HUNT RAN", len(found))
    return found
"""


def _secret_hunt(folder: Path) -> Path:
    """mallory: 01's reference with the hunt in its graded forward_kl (a cell the grader
    runs): full marks when it finds nothing, "LEAKED: ..." (in results.json) otherwise."""
    nb = nbformat.read(str(SOLUTION), as_version=4)
    (cell,) = [
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "forward_kl"
    ]
    # the checkout itself may show as an empty parent of the bound .venv inside it (CI's and
    # this machine's layout): what it holds, the solutions, is what must stay out of view
    paths = [str(folder / "course.secret"), str(SOLUTION), str(ROOT / "solutions")]
    cell.source += (
        "\n"
        + HUNT
        + (
            "\n_honest_forward_kl = forward_kl\n\n\n"
            "def forward_kl(policy, reference):\n"
            f"    found = _hunt({SECRET!r}, {paths!r})\n"
            "    if found:\n"
            "        return 'LEAKED: ' + ' | '.join(found)\n"
            "    return _honest_forward_kl(policy, reference)\n"
        )
    )
    target = folder / "submitted" / "mallory" / "01_exact_kl" / SOLUTION.name
    target.parent.mkdir(parents=True)
    nbformat.write(nb, str(target))
    return target


# 07's graded functions computed by the solutions' own cells, reached through a path: the
# checkout's, or the grader's working folder and root through /proc (its cwd is the checkout)
_FROM_SOLUTIONS = """
def _solution(name):
    import json, os
    rel = "solutions/{a}/{a}.ipynb"
    paths = [{checkout!r} + "/" + rel]
    try:
        for pid in os.listdir("/proc"):
            paths += [f"/proc/{{pid}}/cwd/" + rel, f"/proc/{{pid}}/root" + paths[0]]
    except OSError:
        pass
    for path in paths:
        try:
            with open(path) as f:
                nb = json.load(f)
        except OSError:
            continue
        ns = {{}}
        for c in nb["cells"]:
            if c["cell_type"] == "code":
                try:
                    exec("".join(c["source"]), ns)
                except Exception:
                    pass
        if name in ns:
            return ns[name]
    return None
"""


def _answer_attacks() -> dict[str, tuple[str, str]]:
    """student -> (07's function, its cell): test_answer_key_sandbox's three (tiny_model by
    import, by the checkout's path, by reading its file) and the solution notebook by path and
    through /proc; each falls back to the stub's body (0 points) when it reaches nothing."""
    import test_answer_key_sandbox as answer_key

    attacks = dict(answer_key.ATTACKS)
    helper = _FROM_SOLUTIONS.format(a=A07, checkout=str(ROOT))
    attacks["solution-notebook"] = (
        "thr_weights",
        helper + "\n\ndef thr_weights(thr, dominant, p):\n"
        "    ref = _solution('thr_weights')\n"
        "    if ref is None:\n"
        "        raise NotImplementedError\n"
        "    return ref(thr, dominant, p)\n",
    )
    attacks["solution-through-proc"] = (
        "nll_on_correct",
        helper + "\n\ndef nll_on_correct(logp, mask, correct):\n"
        "    ref = _solution('nll_on_correct')\n"
        "    if ref is None:\n"
        "        raise NotImplementedError\n"
        "    return ref(logp, mask, correct)\n",
    )
    return attacks


def _plant_answer_attacks(folder: Path) -> dict[str, tuple[str, str]]:
    """Each attack of :func:`_answer_attacks` as a student's 07 notebook under
    ``folder/submitted`` (the stub with the attack in its graded cell), and the unanswered stub
    as student "control"; returns the attacks."""
    attacks = _answer_attacks()
    stub = nbformat.read(str(ROOT / "exercises" / A07 / f"{A07}.ipynb"), as_version=4)
    for student, (fn, code) in [*attacks.items(), ("control", (None, None))]:
        nb = nbformat.reads(nbformat.writes(stub), as_version=4)
        for c in nb.cells:
            if fn and c.metadata.get("nbgrader", {}).get("grade_id") == fn:
                c.source = code
        target = folder / "submitted" / student / A07 / f"{A07}.ipynb"
        target.parent.mkdir(parents=True)
        nbformat.write(nb, str(target))
    return attacks


def _hunt_and_attacks_reached_nothing(text: str, attacks: dict[str, tuple[str, str]]) -> dict:
    """Assert on results.json's ``text`` that neither the secret nor a leak shows, that mallory's
    secret hunt (:func:`_secret_hunt`) ran, found nothing and kept full marks, and that each
    answer-key attack scored no more than its control; returns the results."""
    results = json.loads(text)
    by = {(s["student"], s["assignment"]): s for s in results["submissions"]}
    assert "LEAKED" not in text and SECRET not in text
    mallory = by[("mallory", "01_exact_kl")]
    assert mallory["score"] == 7.0, mallory
    assert "HUNT RAN 0" in mallory["child"]["stdout"], mallory["child"]

    def points(student: str, fn: str) -> float:
        (f,) = [f for f in by[(student, A07)]["functions"] if f["function"] == fn]
        return f["score"]

    for student, (fn, _) in attacks.items():
        assert points(student, fn) <= points("control", fn), (
            f"{student}: {fn} took {points(student, fn)} points, its control "
            f"{points('control', fn)}"
        )
    return results


@pytest.mark.slow
def test_with_proc_masked_attacks_reach_nothing_in_the_sandbox_without_its_own_proc(tmp_path):
    """In the emulated pod, graded in "bwrap-noproc" with a private secret: does a graded cell
    that hunts the secret (its environment, every /proc/*/environ, cmdline and mem, the
    secret's file, the solutions, other processes, a proc mount of its own, a user namespace)
    find nothing (full marks, the hunt shown to have run), and does each answer-key attack
    (tiny_model three ways, 07's solution notebook by path and through /proc) score no more
    than the unanswered stub, its control?"""
    podman_runtime.skip_emulation_where_real("the masked-/proc secret hunt and answer attacks")
    _, local = _profiles(tmp_path)
    _secret_hunt(tmp_path)
    attacks = _plant_answer_attacks(tmp_path)
    p = _pod_grade(tmp_path, tmp_path / "submitted", local)
    assert p.returncode == 0, p.stdout + p.stderr
    results = _hunt_and_attacks_reached_nothing(
        (tmp_path / "out" / "results.json").read_text(), attacks
    )
    assert results["isolation"]["mode"] == "bwrap-noproc", results["isolation"]


def test_binding_the_containers_proc_instead_would_show_the_grader(tmp_path):
    """The rejected alternative: bind the container's own /proc into the sandbox (read-only)
    where a new one cannot be mounted. In the emulated pod, with a stand-in grader process
    holding the secret in its environment and its secret file's path on its command line, the
    hunt run in that sandbox lists the pod's processes and reads their command lines (the
    grader's, other sandboxes'): the guarantee "no other process in view" is gone. (The
    grader's environment and memory the kernel still keeps from a process in a child user
    namespace; its command line and the process list it does not.)"""
    _, local = _profiles(tmp_path)
    secret = _secret(tmp_path)
    hunt = HUNT + f"print(_hunt({SECRET!r}, []))"
    sandbox = [
        "bwrap", "--unshare-all", "--unshare-user", "--die-with-parent", "--cap-drop", "ALL",
        "--clearenv",
        "--ro-bind", "/usr", "/usr", "--ro-bind", sys.base_prefix, sys.base_prefix,
        "--ro-bind", "/proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
    ]  # fmt: skip
    for top in ("/bin", "/lib", "/lib64"):
        if Path(top).is_symlink():
            sandbox += ["--symlink", str(Path(top).readlink()), top]
    python = os.path.realpath(sys.executable)
    grader = f"DRILLS_SECRET={SECRET} {python} -c 'import time; time.sleep(60)' --secret-file"
    grader += f' {secret} & exec "$@"'
    argv = ["sh", "-c", grader, "grader", *sandbox, python, "-I", "-c", hunt]
    p = subprocess.run(
        _masked(oci_seccomp.command(local, argv)), capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    assert "process 1" in p.stdout and f"--secret-file {secret}" in p.stdout, p.stdout
    # the same sandbox with the chosen mode's /proc (a tmpfs) shows no process (this bare
    # command line has no seccomp filter, so its user namespace is not refused here)
    chosen = [*sandbox[: sandbox.index("/proc") - 1], "--tmpfs", "/proc"]
    chosen += sandbox[sandbox.index("/proc") + 2 :]
    argv = ["sh", "-c", grader, "grader", *chosen, python, "-I", "-c", hunt]
    p = subprocess.run(
        _masked(oci_seccomp.command(local, argv)), capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0 and "HUNT RAN" in p.stdout, p.stdout + p.stderr
    assert not any(w in p.stdout for w in ("process", "cmdline", "environ", "memory")), p.stdout


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
