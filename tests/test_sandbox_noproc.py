"""bwrap-noproc: bubblewrap without the sandbox's own /proc, chosen only where the kernel
refuses bubblewrap a new proc mount (a container whose /proc the runtime has masked).

Fast checks of the choice and the command line; tests/test_k8s_seccomp.py grades in the mode,
with attacks, in an emulated Kubernetes pod.

- detect() tries "bwrap-noproc" only when the normal probe fails with bubblewrap's "Can't mount
  proc"; any other failure leaves it reduced, as before, and a failing noproc probe too (both
  reasons said);
- the mode's command line mounts no proc: a read-only tmpfs /proc with a bind of
  /proc/cpuinfo, no --disable-userns (it writes the container's read-only /proc/sys), and it
  is never built without the seccomp filter that refuses user namespaces in its place;
- "bwrap"'s command line is unchanged: its own read-only /proc and --disable-userns;
- the secret and the answers count as out of reach in both modes; warm workers are off in
  bwrap-noproc (the zygote mounts a /proc for each job).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.engine import sandbox, worker

CANT = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted"


def _cmd(mode: str, seccomp_fd: int | None = 7) -> list[str]:
    iso = sandbox.Isolation(mode=mode)
    return sandbox.bubblewrap._bwrap_command(
        "bwrap", iso, Path("/nonexistent-in"), Path("/tmp/w"), ["python"], seccomp_fd=seccomp_fd
    )


def test_the_normal_command_line_keeps_its_own_proc():
    cmd = _cmd("bwrap")
    i = cmd.index("--proc")
    assert cmd[i + 1] == "/proc" and cmd[i + 2 : i + 4] == ["--remount-ro", "/proc"]
    assert "--disable-userns" in cmd and "/proc/cpuinfo" not in cmd
    assert _cmd("bwrap", seccomp_fd=None).count("--disable-userns") == 1


def test_the_noproc_command_line_mounts_no_proc_and_needs_the_filter():
    cmd = _cmd("bwrap-noproc")
    assert "--proc" not in cmd and "--disable-userns" not in cmd
    i = cmd.index("--tmpfs")
    assert cmd[i : i + 8] == [
        "--tmpfs", "/proc", "--ro-bind-try", "/proc/cpuinfo", "/proc/cpuinfo",
        "--remount-ro", "/proc", "--dev",
    ]  # fmt: skip
    # nothing else of the machine's /proc is in view
    assert [a for a in cmd if a.startswith("/proc")] == ["/proc", *["/proc/cpuinfo"] * 2, "/proc"]
    assert cmd[cmd.index("--seccomp") + 1] == "7"
    with pytest.raises(sandbox.SandboxError, match="seccomp"):
        _cmd("bwrap-noproc", seccomp_fd=None)


def _detect(monkeypatch, answers: dict[str, str | None]) -> tuple[sandbox.Isolation, list[str]]:
    """detect() with the probes answering ``answers`` (mode -> why it failed, None: works)."""
    asked: list[str] = []

    def probe(bwrap, iso, mode):
        asked.append(mode)
        return answers[mode]

    monkeypatch.setattr(sandbox.bubblewrap, "_probe", probe)
    monkeypatch.setattr(sandbox.modes.shutil, "which", lambda name: "/usr/bin/bwrap")
    monkeypatch.delenv("DRILLS_SANDBOX", raising=False)
    return sandbox.detect([]), asked


def test_detect_keeps_bwrap_where_proc_can_be_mounted(monkeypatch):
    iso, asked = _detect(monkeypatch, {"bwrap": None})
    assert (iso.mode, asked, iso.warnings) == ("bwrap", ["bwrap"], [])


def test_detect_uses_noproc_only_when_the_kernel_refuses_proc(monkeypatch):
    iso, asked = _detect(monkeypatch, {"bwrap": CANT, "bwrap-noproc": None})
    assert iso.mode == "bwrap-noproc" and asked == ["bwrap", "bwrap-noproc"]
    assert iso.bubblewrap and not iso.reduced
    assert iso.warnings == [sandbox.NOPROC_WARNING]
    assert "masked" in iso.warnings[0] and "bwrap-noproc" in iso.warnings[0]
    assert sandbox.secret_exposure(iso, []) is None
    assert sandbox.answer_exposure(iso, Path("/nonexistent")) is None
    assert "own /proc" in worker.warm_possible(iso)


def test_detect_does_not_try_noproc_for_other_failures(monkeypatch):
    why = "bwrap: No permissions to create new namespace"
    iso, asked = _detect(monkeypatch, {"bwrap": why})
    assert iso.mode == "reduced" and asked == ["bwrap"]
    assert any(why in w and "failed to start a sandbox" in w for w in iso.warnings)


def test_detect_falls_back_to_reduced_when_the_noproc_probe_fails_too(monkeypatch):
    iso, asked = _detect(monkeypatch, {"bwrap": CANT, "bwrap-noproc": "/proc holds more"})
    assert iso.mode == "reduced" and asked == ["bwrap", "bwrap-noproc"]
    (said,) = [w for w in iso.warnings if "failed to start a sandbox" in w]
    assert "Can't mount proc" in said and "/proc holds more" in said
    # a course secret is then refused (children would run as the grader's own user), the
    # refusal saying why bubblewrap is not in use
    monkeypatch.setenv("DRILLS_SANDBOX_UID", "keep")
    from autograder.course.grade_cli import Grader

    with pytest.raises(sandbox.SecretExposed, match="Can't mount proc.*/proc holds more"):
        Grader(secret="a course secret")


def test_the_noproc_probe_is_refused_without_a_seccomp_filter(monkeypatch):
    monkeypatch.setattr(sandbox.seccomp, "seccomp_filter", lambda: None)
    iso = sandbox.Isolation(mode="reduced")
    assert "seccomp" in sandbox.bubblewrap._probe("/usr/bin/bwrap", iso, "bwrap-noproc")
