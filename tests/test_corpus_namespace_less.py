"""The held attack corpus where bubblewrap cannot start, as a container's grader meets it.

In a container that refuses user namespaces as Docker's default profile does (emulated:
tests/namespace_less.py, CAP_SYS_ADMIN dropped and the rule set by seccomp; and in a real
runtime: podman with runc under a moby-like RuntimeDefault, tests/podman_runtime.py) a root
grader falls back to the reduced mode and runs each child as a separate uid. The answers are closed to that uid (the
solution notebooks, the grader's case modules, tiny_model: `chmod -R go-rwx`, as its refusal
asks) and the course secret is private (0600). Then: does any fixture of the corpus score more
than it scores under bubblewrap (tests/fixtures/corpus/expected.json), and do the fixtures that
look for the generated inputs or forge records get their bubblewrap scores, and does no output
hold the secret?

`make test` grades the slice below, the readers and forgers; DRILLS_CORPUS_ALL_MODES=1 (or
DRILLS_SWEEP=1) grades every fixture. Fixtures that only resource limits or a private network
hold (the network probe: it answers right only where connections fail) may score less here,
never more.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import ROOT, sweep

pytestmark = pytest.mark.slow

CORPUS = ROOT / "tests" / "fixtures" / "corpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
SECRET = "namespace-less-corpus-secret-5b1e77a0"
SLICE = (
    "solution",
    "leaks_generated_inputs",
    "reads_generated_inputs_via_gc",
    "isolation_plants_code_via_proc",
    "forged_records",
    "lying_objects",
)
# They walk the whole filesystem: without bubblewrap they see this machine's world-readable
# files (another checkout of the course, deep test folders in /tmp), which is what the reduced
# mode is (docs/security.md). Their scores depend on the machine, so only "never above the
# bubblewrap score, and never the secret" is asserted for them.
WALKERS = ("read_secret", "read_case_module", "write_outside")
# the corpus run's own settings for the fixtures that import torch or spend their budget
SLOW = {"monkeypatch", "numpy_torch_scalars", "sleeps_in_every_call", "recurses_in_every_call"}


def _why_not(where: str) -> str | None:
    import namespace_less
    import podman_runtime
    import unprivileged

    runtime = namespace_less.why_not() if where == "emulated" else podman_runtime.why_not()
    return runtime or unprivileged.why_not_as_user()


def _prefix(where: str) -> list[str]:
    """The container: emulated (tests/namespace_less.py), or a real runtime, podman with runc
    under a moby-like RuntimeDefault (tests/podman_runtime.py)."""
    import namespace_less
    import podman_runtime

    if where == "emulated":
        return namespace_less.command([])
    return podman_runtime.command([], podman_runtime.runtime_default_profile())


@pytest.fixture(scope="module", params=["emulated", "podman"])
def graded(request):
    where = request.param
    if where == "emulated":
        import podman_runtime

        podman_runtime.skip_emulation_where_real("the held corpus without namespaces")
    why = _why_not(where)
    if why:
        pytest.skip(why)
    import unprivileged

    every = sweep("DRILLS_CORPUS_ALL_MODES")
    names = sorted(EXPECTED["submissions"]) if every else [*SLICE, *WALKERS]
    names = [n for n in names if n not in SLOW]
    unprivileged.ensure_user()
    top = Path(tempfile.mkdtemp(prefix="drills-corpus-nsl-"))
    try:
        top.chmod(0o755)
        course = unprivileged.closed_course(top)
        private = top / "private"
        secret = private / "course.secret"
        secret.write_text(SECRET + "\n")
        secret.chmod(0o600)
        subs = private / "submitted"
        subs.mkdir()
        for n in names:
            shutil.copy(CORPUS / f"{n}.ipynb", subs / f"{n}.ipynb")
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(private / "home"),
            "LANG": "C.UTF-8",
            "DRILLS_CACHE_DIR": str(private / "cache"),
        }
        out = private / "out"
        p = subprocess.run(
            [*_prefix(where), str(course / ".venv" / "bin" / "drills"), "grade",
             str(subs), "--out", str(out), "--assignment", EXPECTED["assignment"],
             "--jobs", "2", "--timeout", "10", "--budget", "30", "--memory", "1024",
             "--secret-file", str(secret)],
            env=env, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        texts = {
            f.name: f.read_text(errors="replace")
            for f in out.rglob("*")
            if f.is_file() and f.suffix in (".json", ".csv", ".html", ".txt")
        }
        yield (
            p,
            json.loads((out / "results.json").read_text()) if p.returncode == 0 else None,
            texts,
        )
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_the_grader_fell_back_and_graded_with_the_secret(graded):
    p, results, _ = graded
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert "failed to start a sandbox" in p.stderr, p.stderr[-2000:]  # bubblewrap was stopped
    assert results["isolation"]["mode"] == "reduced", results["isolation"]


def test_no_fixture_scores_more_than_under_bubblewrap_and_the_readers_find_nothing(graded):
    p, results, texts = graded
    assert results is not None, p.stderr[-3000:]
    got = {s["student"]: s for s in results["submissions"]}
    forged, differ = {}, {}
    for name, sub in got.items():
        want = EXPECTED["submissions"][name]
        scores = {f["function"]: f["score"] for f in sub["functions"]}
        for function, expected in want["scores"].items():
            if scores.get(function, 0.0) > expected + 1e-9:
                forged[f"{name}/{function}"] = (scores.get(function), expected)
            elif name in SLICE and abs(scores.get(function, 0.0) - expected) > 1e-9:
                differ[f"{name}/{function}"] = (scores.get(function), expected)
    assert not forged, f"scored above their bubblewrap scores (a forged pass): {forged}"
    why = {
        k: next(
            (f.get("error") or f.get("diagnosis") or f.get("note"))
            for f in got[k.split("/")[0]]["functions"]
            if f["function"] == k.split("/")[1]
        )
        for k in differ
    }
    assert not differ, (
        f"the readers and forgers scored otherwise than finding nothing: {differ} {why}"
    )
    leaked = [name for name, text in texts.items() if SECRET in text]
    assert not leaked, f"the course secret is in {leaked}"
