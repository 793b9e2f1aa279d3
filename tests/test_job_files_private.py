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
