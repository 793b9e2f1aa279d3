"""An unprivileged user who grades: the user, a course checkout they can run, and running as them.

Used by the tests that grade as an ordinary user (tests/test_slurm_real.py through Slurm,
tests/test_warm_worker.py directly): both need root (useradd, runuser) and skip elsewhere.
The user must be able to run the venv, whose base Python may sit under /root: readable_course
builds a copy they can read (hard links where the file system allows) of the base Python, the
venv (its scripts and links pointed at the copies) and the working tree. Nothing of the
checkout is changed.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import ROOT

USER = "drills-slurm"


def which(name: str) -> str | None:
    """``name`` on PATH or in the sbin folders (where the daemons are; not always on PATH)."""
    return shutil.which(name, path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")


def why_not_as_user() -> str | None:
    """Why a test cannot grade as the unprivileged user here (None: it can)."""
    if sys.platform != "linux":
        return "grading as another user is tried on Linux only"
    if os.geteuid() != 0:
        return "creating the unprivileged user and running as them needs root"
    missing = [p for p in ("useradd", "runuser", "getent") if which(p) is None]
    if missing:
        return f"not installed: {', '.join(missing)}"
    return None


def user_can_read(path: Path) -> bool:
    return (
        subprocess.run([which("runuser"), "-u", USER, "--", "test", "-r", str(path)]).returncode
        == 0
    )


def link_copy(src: Path, dst: Path, skip: tuple[str, ...] = ()) -> None:
    """``dst`` = ``src`` by hard links (same modes; copies across file systems)."""

    def link(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    shutil.copytree(
        src, dst, symlinks=True, copy_function=link, ignore=shutil.ignore_patterns(*skip)
    )


def runpath_to_origin(exe: Path, old_lib: bytes) -> None:
    """An interpreter linked with RUNPATH=<old prefix>/lib finds libpython at $ORIGIN/../lib
    (the string is patched in a new file, padded with NULs: it can only get shorter)."""
    data = exe.read_bytes()
    new = b"$ORIGIN/../lib"
    if old_lib + b"\0" not in data or len(new) > len(old_lib):
        return
    data = data.replace(old_lib + b"\0", new + b"\0" * (len(old_lib) - len(new) + 1))
    mode = stat.S_IMODE(exe.stat().st_mode)
    exe.unlink()
    exe.write_bytes(data)
    exe.chmod(mode)


def readable_python(top: Path) -> Path:
    """The project's base Python, or where the user cannot reach it (pyenv under /root) a
    hard-linked copy of it and its standard library under ``top`` (no site-packages)."""
    base = Path(sys.base_prefix).resolve()
    exe = Path(os.path.realpath(sys.executable))
    assert exe.is_relative_to(base) and Path(sys.prefix) != base, "run with the project's .venv"
    if not user_can_read(exe):
        pyver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        python = top / "python"
        python.mkdir()
        for part in ("bin", "lib"):
            link_copy(base / part, python / part, skip=("site-packages", "test", "__pycache__"))
        assert (python / "lib" / pyver / "os.py").is_file()
        exe = python / exe.relative_to(base)
        runpath_to_origin(exe, str(base / "lib").encode())
    return exe


def readable_packages(top: Path) -> Path:
    """The project venv's site-packages, or a hard-linked copy under ``top`` the user can
    read. Put it on a path with ``sys.path.append`` in a .pth, never as a site folder: its own
    .pth files include the project's editable install (the checkout, answers and all)."""
    site_rel = Path(sysconfig.get_path("purelib", vars={"base": "."}))
    packages = Path(sys.prefix) / site_rel
    if not user_can_read(packages):
        link_copy(packages, top / "site-packages")
        packages = top / "site-packages"
    return packages


def readable_course(top: Path) -> Path:
    """A course checkout under ``top`` with a working .venv, both usable by the user.

    The working tree is copied (a few MB). The venv is a new one that imports the course
    from that copy and the installed packages from the project's .venv, or, where the user
    cannot read that, from hard links to it. Its base Python is the project's, or, where the
    user cannot reach it (pyenv under /root), a hard-linked copy of its standard library.
    """
    course = top / "course"
    shutil.copytree(
        ROOT,
        course,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", "node_modules"
        ),
    )
    exe = readable_python(top)
    site_rel = Path(sysconfig.get_path("purelib", vars={"base": "."}))
    packages = readable_packages(top)
    venv = course / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / site_rel).mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(
        f"home = {exe.parent}\ninclude-system-site-packages = false\n"
        f"version = {'.'.join(map(str, sys.version_info[:3]))}\n"
    )
    (venv / "bin" / exe.name).symlink_to(exe)
    for name in ("python", "python3"):
        if name != exe.name:
            (venv / "bin" / name).symlink_to(exe.name)
    # the course first, then the packages, whose own .pth files are not run: one of them is the
    # project's editable install, which would make the project's checkout importable (a second
    # copy of the answers, open to everyone) wherever the course's copy is closed
    (venv / site_rel / "drills_course.pth").write_text(
        f"{course}\nimport sys; sys.path.append({str(packages)!r})\n"
    )
    drills = venv / "bin" / "drills"
    drills.write_text(
        f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom autograder.cli import main\n"
        "sys.exit(main())\n"
    )
    drills.chmod(0o755)
    return course


def ensure_user() -> None:
    """The unprivileged user who submits (created once, as a system user; kept afterwards)."""
    if subprocess.run(["getent", "passwd", USER], capture_output=True).returncode != 0:
        p = subprocess.run(
            [
                which("useradd"),
                "--system",
                "--user-group",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                USER,
            ],
            capture_output=True,
            text=True,
        )
        # another run may have created it meanwhile (exit 9: the name is taken)
        assert p.returncode in (0, 9), f"useradd {USER}: {p.stderr}"


def as_user(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 120):
    """``args`` run by the unprivileged user with exactly ``env`` (runuser keeps no more)."""
    cmd = [
        which("runuser"),
        "-u",
        USER,
        "--",
        "env",
        "-i",
        *(f"{k}={v}" for k, v in env.items()),
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)


ANSWERS = ("solutions", "autograder", "tiny_model")


def closed_course(top: Path) -> Path:
    """:func:`readable_course`, with the answers (the solution notebooks, the grader's case
    modules, tiny_model) closed to other users (``chmod -R go-rwx``), as a root grader whose
    children run as their own uids requires, and a private folder ``top/private`` (0700) for
    the secret, the outputs and the caches. ``top`` must be a folder other users can reach."""
    course = readable_course(top)
    for answers in ANSWERS:
        subprocess.run(["chmod", "-R", "go-rwx", str(course / answers)], check=True)
    (top / "private").mkdir(mode=0o700)
    return course
