"""A checkout copied or moved with its .venv runs its own code (tools/repoint_venv.py, `make`).

`pip install -e .` writes the checkout's absolute path into the venv (the editable finder,
direct_url.json, the scripts' #! lines). A copy of the checkout keeps them, so its `drills`
graded the original's code. `make` now runs tools/repoint_venv.py first, which re-points them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

SITE = "lib/python3/site-packages"


def _fake_checkout(where: Path, installed_for: Path, finder_text: str | None = None) -> Path:
    """A checkout at ``where`` with a .venv as `pip install -e .` leaves it for
    ``installed_for``: the editable finder, direct_url.json, a script and activate."""
    venv = where / ".venv"
    site = venv / SITE
    (site / "reward_drills-0.1.0.dist-info").mkdir(parents=True)
    (venv / "bin").mkdir()
    finder = finder_text or (
        "MAPPING: dict[str, str] = {'autograder': '%s/autograder', 'tiny_model': '%s/tiny_model'}\n"
    )
    (site / "__editable___reward_drills_0_1_0_finder.py").write_text(
        finder.replace("%s", str(installed_for))
    )
    (site / "reward_drills-0.1.0.dist-info/direct_url.json").write_text(
        json.dumps({"dir_info": {"editable": True}, "url": f"file://{installed_for}"})
    )
    drills = venv / "bin/drills"
    drills.write_text(f"#!{installed_for}/.venv/bin/python\nfrom autograder.cli import main\n")
    drills.chmod(0o755)
    (venv / "bin/activate").write_text(f'VIRTUAL_ENV="{installed_for}/.venv"\nexport VIRTUAL_ENV\n')
    (where / "tools").mkdir()
    shutil.copy2(ROOT / "tools/repoint_venv.py", where / "tools/repoint_venv.py")
    shutil.copy2(ROOT / "Makefile", where / "Makefile")
    return venv


def _make(where: Path, *targets: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "-s", "-C", str(where), *targets, f"PYTHON={sys.executable}"],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_repoints_a_copied_checkouts_venv_at_the_copy(tmp_path):
    """A copy of a checkout installed at orig/: does `make` re-point the finder, direct_url,
    the scripts' #! line and activate at the copy, say so, and do nothing the second time?"""
    orig, copy = tmp_path / "orig", tmp_path / "copy"
    copy.mkdir()
    venv = _fake_checkout(copy, orig)
    check = subprocess.run(
        [sys.executable, str(copy / "tools/repoint_venv.py"), str(venv), "--check"],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 1 and f"installed for {orig}" in check.stdout

    first = _make(copy, "venv-here")
    assert first.returncode == 0, first.stderr
    assert f"was installed for {orig}; re-pointed at {copy} (4 files)" in first.stdout
    site = venv / SITE
    finder = (site / "__editable___reward_drills_0_1_0_finder.py").read_text()
    assert f"'autograder': '{copy}/autograder'" in finder and str(orig) not in finder
    assert (
        f'"url": "file://{copy}"'
        in (site / "reward_drills-0.1.0.dist-info/direct_url.json").read_text()
    )
    drills = venv / "bin/drills"
    assert drills.read_text().splitlines()[0] == f"#!{copy}/.venv/bin/python"
    assert os.access(drills, os.X_OK)
    assert f'VIRTUAL_ENV="{copy}/.venv"' in (venv / "bin/activate").read_text()

    second = _make(copy, "venv-here")
    assert second.returncode == 0 and second.stdout == ""
    again = subprocess.run(
        [sys.executable, str(copy / "tools/repoint_venv.py"), str(venv), "--check"],
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0 and f"runs this checkout ({copy})" in again.stdout, again.stdout


def test_a_venv_installed_for_its_own_checkout_is_left_alone(tmp_path):
    venv = _fake_checkout(tmp_path, tmp_path)
    before = {p: p.read_text() for p in venv.rglob("*") if p.is_file()}
    r = subprocess.run(
        [sys.executable, str(tmp_path / "tools/repoint_venv.py"), str(venv)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and r.stdout == ""
    assert {p: p.read_text() for p in venv.rglob("*") if p.is_file()} == before


def test_the_copied_venv_imports_the_copys_code_after_repointing(tmp_path):
    """The real editable finder of this venv, in a copy: before re-pointing `import autograder`
    loads the original's package, after it the copy's."""
    real = sorted(
        Path(sys.prefix).glob("lib/python*/site-packages/__editable___reward_drills_*_finder.py")
    )
    if not real or sys.prefix == sys.base_prefix:
        pytest.skip("this interpreter has no editable install of reward-drills")
    text = real[0].read_text()
    installed = text.split("'autograder': '", 1)[1].split("/autograder'", 1)[0]
    orig, copy = tmp_path / "orig", tmp_path / "copy"
    for root in (orig, copy):
        (root / "autograder").mkdir(parents=True)
        (root / "autograder/__init__.py").write_text(f"WHERE = {str(root)!r}\n")
        (root / "tiny_model").mkdir()
    venv = _fake_checkout(copy, orig, text.replace(installed, "%s"))
    pth = next(real[0].parent.glob("__editable__.reward_drills-*.pth"))
    shutil.copy2(pth, venv / SITE / pth.name)
    py = venv / "bin/python"
    py.symlink_to(Path(sys.executable).resolve())
    (venv / "pyvenv.cfg").write_text((Path(sys.prefix) / "pyvenv.cfg").read_text())
    site_dir = venv / f"lib/python{sys.version_info.major}.{sys.version_info.minor}"
    (venv / "lib/python3").rename(site_dir)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}

    def where() -> str:
        r = subprocess.run(
            [str(py), "-c", "import autograder; print(autograder.WHERE)"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    assert where() == str(orig)
    r = subprocess.run(
        [sys.executable, str(copy / "tools/repoint_venv.py"), str(venv)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and "re-pointed" in r.stdout
    assert where() == str(copy)
