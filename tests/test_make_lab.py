"""Does `make lab`, the README's first command, bring up JupyterLab serving exercises/?

Runs the real target in this checkout (in CI: a fresh clone, whose .venv
`make test` has just built), with LAB_ARGS choosing a free local port, a token
and no browser; requests /lab and the contents API, then stops the server.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, token: str) -> tuple[int, bytes]:
    req = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.mark.skipif(shutil.which("make") is None, reason="`make` is not installed")
@pytest.mark.skipif(
    not (ROOT / ".venv" / "bin" / "jupyter").exists(),
    reason="make lab test skipped: no .venv here (run it through `make test`, which builds it)",
)
def test_make_lab_serves_the_exercises(tmp_path):
    """Does `make lab` start JupyterLab on the port and token given in LAB_ARGS, answer /lab, and
    serve exercises/ (one folder per released notebook) as its root?"""
    port, token = _free_port(), "make-lab-test-" + os.urandom(8).hex()
    lab_args = f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0 --IdentityProvider.token={token}"
    env = dict(os.environ)
    env.update(
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "ws"),
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
    )
    log = tmp_path / "make-lab.log"
    with open(log, "w") as logf:
        proc = subprocess.Popen(
            ["make", "--no-print-directory", "lab", f"LAB_ARGS={lab_args}"],
            cwd=ROOT,
            env=env,
            stdout=logf,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                status, _ = _get(f"{base}/api/status", token)
                if status == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(
                    f"`make lab` did not serve {base} (exit {proc.poll()}):\n{log.read_text()[-3000:]}"
                )
            time.sleep(0.5)

        status, body = _get(f"{base}/lab", token)
        assert status == 200, status
        assert b"JupyterLab" in body or b"jupyter-config-data" in body, body[:500]

        status, body = _get(f"{base}/api/contents", token)
        assert status == 200, status
        served = sorted(
            item["name"] for item in json.loads(body)["content"] if item["type"] == "directory"
        )
        expected = sorted(
            p.name
            for p in (ROOT / "exercises").iterdir()
            if p.is_dir() and not p.name.startswith(".")
        )
        assert served == expected, f"`make lab` serves {served}, exercises/ holds {expected}"

        first = expected[0]
        status, body = _get(f"{base}/api/contents/{first}/{first}.ipynb?content=0", token)
        assert status == 200 and json.loads(body)["type"] == "notebook", (status, body[:300])

        # Without the token the server refuses the API: LAB_ARGS' token is the one in force.
        req = urllib.request.Request(f"{base}/api/contents")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=10)
        assert refused.value.code == 403
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # make and its jupyter: the group this test started
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
