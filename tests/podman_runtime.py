"""Run a command in a real container: podman with runc, Debian's packages, no image registry.

    podman --runtime runc run --rm --rootfs /:O ... CMD...

The container's root file system is this machine's own, under an overlay (``--rootfs /:O``:
nothing needs pulling, and what the container writes outside the bound temporary folder is
thrown away with it). Everything else is the runtime's: its own mount, pid, network (none),
IPC and UTS namespaces, /proc masked and read-only in parts as runc leaves a container's, the
default capability set (no CAP_SYS_ADMIN), and a seccomp profile: podman's own default
(containers/common, /usr/share/containers/seccomp.json on Debian 12) unless ``profile``
names another (e.g. a moby-like RuntimeDefault, tests/test_k8s_seccomp.py's).

Where this stands against the emulations (tests/namespace_less.py, tests/oci_seccomp.py): the
profile is loaded by runc, not by a launcher of ours, and the /proc masking is the runtime's.
What it is not: Docker (moby's own profile file), containerd, a Kubernetes node, AppArmor (none
is loaded here), or cgroup limits (podman runs with cgroup v1 on this machine).

The environment variables of the calling process reach the container (``--env-host``), the
working folder is the same path, and the system's temporary folder is bound read-write, so a
test's ``tmp_path`` holds what the container wrote.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import subprocess
import tempfile
from pathlib import Path


def _limit(which: int) -> str:
    """A ulimit podman may set: runc cannot raise one past what the caller holds (no
    CAP_SYS_RESOURCE in a container host), and podman's defaults for root are higher."""
    soft, hard = resource.getrlimit(which)
    n = min(x for x in (soft, hard, 4096) if x != resource.RLIM_INFINITY)
    return f"{n}:{n}"


# deploy/k8s's grading pod: runAsNonRoot as the image's user, capabilities: drop ALL,
# allowPrivilegeEscalation: false, readOnlyRootFilesystem (writes go to the bound /tmp)
POD = ["--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only"]
POD += ["--read-only-tmpfs=false"]  # its /run copy-up fails on the host root's overlay


def command(
    argv: list[str],
    profile: Path | None = None,
    cwd: Path | None = None,
    user: str | None = None,
) -> list[str]:
    """``argv`` run in a container (see the module); ``profile``: a seccomp profile (JSON)
    in place of podman's default; ``user`` ("uid:gid"): run as that user with the grading
    pod's security context (:data:`POD`) instead of as root with podman's default
    capabilities."""
    here = Path(cwd or os.getcwd())
    tmp = Path(tempfile.gettempdir()).resolve()
    line = [
        "podman", "--runtime", "runc", "run", "--rm", "--network", "none", "--env-host",
        "--ulimit", f"nofile={_limit(resource.RLIMIT_NOFILE)}",
        "--ulimit", f"nproc={_limit(resource.RLIMIT_NPROC)}",
        "-v", f"{tmp}:{tmp}", "-w", str(here),
    ]  # fmt: skip
    if profile is not None:
        line += ["--security-opt", f"seccomp={profile}"]
    if user is not None:
        line += ["--user", user, *POD]
    return [*line, "--rootfs", "/:O", *argv]


@functools.cache
def why_not() -> str | None:
    """Why this machine cannot run such a container (None when it can): tried once."""
    if os.geteuid() != 0:
        return "podman with runc and a host root file system needs root here"
    for tool in ("podman", "runc"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: apt-get install podman runc)"
    try:
        p = subprocess.run(
            command(["sh", "-c", "grep -q '^Seccomp:.*2' /proc/self/status"], cwd=Path("/")),
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        return "podman did not start a container within 120 s"
    if p.returncode != 0:
        why = (p.stderr.strip().splitlines() or ["no message"])[-1]
        return f"podman cannot start a container here with a seccomp filter: {why}"
    return None


def command_or_skip(argv: list[str], profile: Path | None = None) -> list[str]:
    """:func:`command`, or the calling test skipped saying why this machine cannot run it."""
    why = why_not()
    if why:
        import pytest

        pytest.skip(why)
    return command(argv, profile)


@functools.cache
def runtime_default_profile() -> Path:
    """tests/oci_seccomp.py's moby-like RuntimeDefault for this machine's system calls, as a
    file for ``--security-opt seccomp=`` (written once per process, in the temporary folder):
    under it, as under Docker's default, neither bubblewrap nor ``unshare -U`` starts."""
    import json

    import oci_seccomp

    folder = Path(tempfile.mkdtemp(prefix="drills-podman-profile-"))
    path = folder / "runtime-default.json"
    path.write_text(json.dumps(oci_seccomp.runtime_default(oci_seccomp.syscall_names())))
    return path


def skip_emulation_where_real(what: str) -> None:
    """Skip the calling emulated test where the real runtime runs the same checks (its
    counterpart in tests/test_podman_runtime.py or a podman parameter), unless
    DRILLS_EMULATED_TOO=1 (or DRILLS_SWEEP=1) asks for both: on a machine without podman the
    emulation is what holds them."""
    from conftest import sweep

    if why_not() is None and not sweep("DRILLS_EMULATED_TOO"):
        import pytest

        pytest.skip(
            f"{what}: tested in a real runtime here (podman); DRILLS_EMULATED_TOO=1 runs the "
            "emulation as well"
        )
