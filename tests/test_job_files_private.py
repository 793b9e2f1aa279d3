"""Can anyone but the grader and the child read a child's job (the learner's code and the
generated inputs under the course secret)?

Held attack: a root grader whose children run as their own uids (its Python readable by
others) wrote each cold child's ``job.json`` 0644 in a 0755 folder under a 0711 scratch folder,
so another local user polling the temporary folder read every student's code and 16 of 16
generated inputs, and with ``--jobs 2`` one student's code read its neighbour's job. The box is
built here as the grader builds it (``sandbox.make_box``, the code every cold child and warm
worker goes through) under umask 000, then read as the child's own uid, as the neighbour's uid
and as an unrelated uid.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder.engine import sandbox

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="reading as other uids needs root and setpriv (util-linux)",
)

SECRET_JOB = '{"code": "def forward_kl(p, q): ...", "inputs": [0.123456789]}'


def _reads(uid: int, path) -> bool:
    """Can ``uid`` (its own group only, no supplementary groups) read ``path``?"""
    r = subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "cat", str(path)],
        capture_output=True,
        text=True,
    )
    return r.returncode == 0 and SECRET_JOB in r.stdout


@pytest.fixture
def boxes():
    iso = sandbox.Isolation(mode="reduced", drop_uid=True)
    old = os.umask(0)
    made = []
    try:
        for slot in (0, 1):
            tmp = sandbox.scratch_dir("child")
            box = sandbox.make_box(tmp, iso, slot, {"harness.py": "pass\n"})
            box.put("job.json", SECRET_JOB)
            made.append(box)
        yield made
    finally:
        os.umask(old)
        for box in made:
            sandbox.release_scratch(box.tmp)


def test_a_childs_job_is_readable_by_that_child(boxes):
    """The child must still read its own job (else nothing would grade)."""
    assert _reads(sandbox.common._child_uid(0), boxes[0].indir / "job.json")


def test_neighbour_student_cannot_read_the_job_of_the_child_beside_it(boxes):
    """--jobs 2: slot 1's learner code (its own uid) reads slot 0's job.json?"""
    assert not _reads(sandbox.common._child_uid(1), boxes[0].indir / "job.json"), (
        "the child of slot 1 read slot 0's job (another student's code and hidden inputs)"
    )


def test_another_local_user_polling_tmp_cannot_read_any_job_under_umask_000(boxes):
    """A user of the machine who is neither the grader nor a child: every job file, and every
    folder on the way, closed to them whatever the umask the grader ran under."""
    stranger = 65533
    for box in boxes:
        assert not _reads(stranger, box.indir / "job.json"), f"a stranger read {box.indir}"
        assert (box.tmp.stat().st_mode & 0o007) == 0, oct(box.tmp.stat().st_mode)
        assert (box.indir.stat().st_mode & 0o007) == 0, oct(box.indir.stat().st_mode)
        assert ((box.indir / "job.json").stat().st_mode & 0o007) == 0


def test_a_grader_whose_child_is_its_own_user_keeps_the_box_owner_only(tmp_path):
    """No uid to drop to (an ordinary user grading): tmp, in and the job are 0700/0600."""
    old = os.umask(0)
    try:
        tmp = sandbox.scratch_dir("child")
        box = sandbox.make_box(tmp, sandbox.Isolation(mode="reduced"), 0, {})
        box.put("job.json", SECRET_JOB)
        modes = [p.stat().st_mode & 0o777 for p in (tmp, box.indir, box.indir / "job.json")]
    finally:
        os.umask(old)
        sandbox.release_scratch(tmp)
    assert modes == [0o700, 0o700, 0o600], [oct(m) for m in modes]


# -- the same, end to end: two students who each hunt the other's job while both run -----------

# Each student's graded forward_kl cell hunts, when it runs, for job files (its own and its
# neighbour's, told apart by the mark in the code each job carries) wherever a child could
# look: the temporary folder's sandbox folders, and every process's working folder and root
# through /proc. It keeps looking, at most WINDOW seconds, until a sandbox folder appears that
# was not there when it started (the neighbour starting beside it; never, in bubblewrap, where
# other folders are out of view), and two seconds more (its job is written just after). forward_kl is wrong (twice the KL) if a neighbour's job was read.
WINDOW = 3
_SPY = """
def _spy(mine, theirs, window):
    import glob, os, time
    theirs = theirs[::-1]  # written reversed: this job's own code must not hold the other mark
    own_box = os.path.dirname(os.getcwd())
    # the sandbox folders' parent (the grader's temporary folder), and /tmp
    parents = sorted({os.path.dirname(own_box), "/tmp"})
    found = {"own": 0, "other": 0, "new_dirs": 0}
    before = {d for p in parents for d in glob.glob(p + "/drills-child-*")}
    deadline = time.monotonic() + window
    while True:
        dirs = {d for p in parents for d in glob.glob(p + "/drills-child-*")}
        dirs -= before | {own_box}
        found["new_dirs"] = max(found["new_dirs"], len(dirs))
        paths = {j for p in parents for j in glob.glob(p + "/drills-*/in/job.json")}
        paths.add(os.path.join(own_box, "in", "job.json"))
        try:
            pids = [p for p in os.listdir("/proc") if p.isdigit()]
        except OSError:
            pids = []
        for pid in pids:
            paths.add(f"/proc/{pid}/cwd/../in/job.json")
            for p in parents:
                paths.update(glob.glob(f"/proc/{pid}/root{p}/drills-*/in/job.json"))
        for path in paths:
            try:
                with open(path) as f:
                    text = f.read()
            except OSError:
                continue
            if theirs in text:
                found["other"] += 1
            elif mine in text:
                found["own"] = 1
        if dirs and found["new_dirs"] == len(dirs) and not found.get("seen_at"):
            found["seen_at"] = time.monotonic()  # a neighbour's folder, its job maybe not yet
        seen = found.get("seen_at")
        if found["other"] or (seen and time.monotonic() > seen + 2) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    print("SPY", mine, found["own"], found["other"], found["new_dirs"])
    return found
"""


def _spy_notebook(mine: str, theirs: str):
    import nbgrader_course

    nb = nbgrader_course.learner_notebook("01_exact_kl", "solution", None, slim=True)
    (cell,) = [
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "forward_kl"
    ]
    cell.source += (
        "\n" + _SPY + f"\n_FOUND = _spy({mine!r}, {theirs[::-1]!r}, {WINDOW})\n"
        "_mine = forward_kl\n\n\n"
        "def forward_kl(policy, reference):\n"
        "    if _FOUND['other']:\n"
        "        return 2.0 * _mine(policy, reference)\n"
        "    return _mine(policy, reference)\n"
    )
    return nb


def _spies(root: Path) -> Path:
    import nbformat

    marks = {"ann": "MARK-ANN-7f3a", "ben": "MARK-BEN-91c2"}
    for student, other in (("ann", "ben"), ("ben", "ann")):
        folder = root / "submitted" / student / "01_exact_kl"
        folder.mkdir(parents=True)
        nb = _spy_notebook(marks[student], marks[other])
        nbformat.write(nb, str(folder / "01_exact_kl.ipynb"))
    return root / "submitted"


def _spy_results(out: Path) -> dict[str, tuple[float, list[int]]]:
    import json

    results = json.loads((out / "results.json").read_text())
    got = {}
    for s in results["submissions"]:
        line = next(x for x in s["child"]["stdout"].splitlines() if x.startswith("SPY "))
        got[s["student"]] = (s["score"], [int(x) for x in line.split()[2:]])
    return got


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["bubblewrap-cold", "bubblewrap-warm"])
def test_two_students_graded_side_by_side_in_bubblewrap_read_neither_job(tmp_path, mode):
    """With --jobs 2 and a course secret, each student's code hunts the other's job (the
    learner's code and the generated inputs) while both run: does neither read the other's,
    warm and cold (full marks, the hunt shown to have run)?"""
    from conftest import run_drills

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    secret = tmp_path / "course.secret"
    secret.write_text("job-spy-secret-5521\n")
    secret.chmod(0o600)
    out = tmp_path / "out"
    p = run_drills(
        "grade", str(_spies(tmp_path)), "--out", str(out), "--jobs", "2", "--secret-file",
        str(secret), DRILLS_WARM="off" if mode.endswith("cold") else "on",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    got = _spy_results(out)
    assert sorted(got) == ["ann", "ben"], got
    for student, (score, (_, other, _)) in got.items():
        assert other == 0 and score == 7.0, (student, got)


@pytest.mark.slow
def test_two_students_graded_side_by_side_without_namespaces_read_neither_job():
    """The same where bubblewrap cannot start (a container under a moby-like RuntimeDefault:
    podman with runc, or its emulation where podman cannot run), the grader root and each
    child its own uid: does each child read its own job (so the hunt looks in the right
    places), but never the other's? (One of the two sees the other's sandbox folder appear:
    both ran at once.)"""
    import tempfile

    import namespace_less
    import podman_runtime
    import unprivileged

    why = unprivileged.why_not_as_user()
    if podman_runtime.why_not() is None:
        prefix = podman_runtime.command([], podman_runtime.runtime_default_profile())
    elif namespace_less.why_not() is None:
        prefix = namespace_less.command([])
    else:
        why = why or f"{podman_runtime.why_not()}; {namespace_less.why_not()}"
    if why:
        pytest.skip(why)
    top = Path(tempfile.mkdtemp(prefix="drills-job-spy-"))
    try:
        top.chmod(0o755)
        course = unprivileged.closed_course(top)
        private = top / "private"
        secret = private / "course.secret"
        secret.write_text("job-spy-secret-5521\n")
        secret.chmod(0o600)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(private / "home"), "LANG": "C.UTF-8"}
        env["DRILLS_CACHE_DIR"] = str(private / "cache")
        env["DRILLS_WARM"] = "off"  # cold children: each job is a file in its sandbox folder
        out = private / "out"
        p = subprocess.run(
            [*prefix, str(course / ".venv" / "bin" / "drills"), "grade", str(_spies(private)),
             "--out", str(out), "--jobs", "2", "--secret-file", str(secret)],
            env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
        assert "failed to start a sandbox" in p.stderr, p.stderr[-2000:]
        got = _spy_results(out)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    assert sorted(got) == ["ann", "ben"], got
    for student, (score, (own, other, _)) in got.items():
        assert other == 0 and score == 7.0, (student, got)
        assert own == 1, f"{student}'s hunt did not find its own job: it looked in the wrong place"
    assert any(found[2] > 0 for _, found in got.values()), f"the two never ran at once: {got}"
