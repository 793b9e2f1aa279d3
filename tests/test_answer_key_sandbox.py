"""The sandbox holds no answer key: learner code cannot import tiny_model, whose training code
implements 05-07's graded maths, nor the grader's own package.

A `thr_weights` that returned `tiny_model.reference.thr_weights(...)` took every value point of 07
(1.77 of 2, only the input checks missing; `nll_on_correct` and `smaug_floor` 0.9 of 1 each):
tiny_model was bound into every sandbox although no setup cell, case or codec uses it. Each
attack below calls a reference through tiny_model, by import or by a path to the checkout; none
may score more than the stub (0), under bubblewrap, warm and cold.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from conftest import run_drills

REPO = Path(__file__).resolve().parent.parent
A = "07_beyond_nthr"

ATTACKS = {
    "import": (
        "thr_weights",
        "def thr_weights(thr, dominant, p):\n"
        "    from tiny_model.reference import thr_weights as ref\n"
        "    return ref(thr, dominant, p)\n",
    ),
    "checkout-path": (
        "nll_on_correct",
        "def nll_on_correct(logp, mask, correct):\n"
        "    import sys\n"
        f"    sys.path.insert(0, {str(REPO)!r})\n"
        "    import tiny_model.reference as t\n"
        "    return t.nll_on_correct(logp, mask, correct)\n",
    ),
    "file-read": (
        "smaug_floor",
        "def smaug_floor(seq_logp, ref_seq_logp, correct):\n"
        f"    src = open({str(REPO / 'tiny_model' / 'reference.py')!r}).read()\n"
        "    ns = {}\n"
        "    exec(src, ns)\n"
        "    return ns['smaug_floor'](seq_logp, ref_seq_logp, correct)\n",
    ),
}


@pytest.fixture(scope="module")
def submitted(tmp_path_factory):
    root = tmp_path_factory.mktemp("answer-key") / "submitted"
    for student, (fn, code) in ATTACKS.items():
        nb = nbformat.read(str(REPO / "exercises" / A / f"{A}.ipynb"), as_version=4)
        for c in nb.cells:
            if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == fn:
                c.source = code
        (root / student / A).mkdir(parents=True)
        nbformat.write(nb, str(root / student / A / f"{A}.ipynb"))
    return root


@pytest.mark.slow
@pytest.mark.parametrize("warm", ["on", "off"])
def test_no_sandboxed_function_reaches_tiny_models_reference(submitted, tmp_path, warm):
    """Importing tiny_model, putting the checkout on sys.path, or reading reference.py from it: does
    any of these give a graded function a point under bubblewrap (warm and cold)?"""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed here")
    out = tmp_path / "out"
    p = run_drills("grade", str(submitted), "--out", str(out), "--jobs", "2", DRILLS_WARM=warm)
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads((out / "results.json").read_text())
    assert res["isolation"]["mode"] == "bwrap", res["isolation"]
    for s in res["submissions"]:
        fn = ATTACKS[s["student"]][0]
        (f,) = [f for f in s["functions"] if f["function"] == fn]
        if s["student"] != "file-read":  # an import is said to the learner, with the fix
            assert any("imports tiny_model" in w for w in s["warnings"]), s["warnings"]
        assert f["score"] == 0.0, (
            f"{s['student']}: {fn} took {f['score']} points from tiny_model's reference "
            f"({f.get('error') or f.get('diagnosis')})"
        )


def test_a_root_grader_without_bubblewrap_refuses_answers_other_uids_can_read(monkeypatch):
    """Without bubblewrap a root grader runs learner code as a separate uid, which read the
    checkout's solutions/ (0755/0644) and forged full marks. With a course secret (a graded
    class), does grading refuse while the solutions, the case modules or tiny_model are open
    to other users, naming the path and the chmod, and go on once they are closed?"""
    import tempfile

    from autograder.course.grade_cli import Grader
    from autograder.engine import sandbox

    # under /tmp, reachable by others as a checkout is (pytest's own folders are private)
    top = Path(tempfile.mkdtemp(prefix="drills-answer-reach-"))
    try:
        course = top / "course"
        (course / "solutions").mkdir(parents=True)
        answers = top / "pkg"
        answers.mkdir()
        for p in (top, course, course / "solutions"):
            p.chmod(0o755)
        answers.chmod(0o700)
        monkeypatch.setattr(sandbox.common, "_answer_dirs", lambda: [answers])
        iso = sandbox.Isolation(mode="reduced", drop_uid=True)
        why = sandbox.answer_exposure(iso, course)
        assert why and str(course / "solutions") in why and "chmod -R go-rwx" in why
        (course / "solutions").chmod(0o700)
        assert sandbox.answer_exposure(iso, course) is None
        answers.chmod(0o755)
        assert str(answers) in sandbox.answer_exposure(iso, course)
        bwrap = sandbox.Isolation(mode="bwrap", drop_uid=True)
        assert sandbox.answer_exposure(bwrap, course) is None

        monkeypatch.setattr(sandbox, "detect", lambda hidden, force_reduced=False: iso)
        monkeypatch.setattr(sandbox, "secret_exposure", lambda iso, private: None)
        with pytest.raises(sandbox.SecretExposed, match="chmod -R go-rwx"):
            Grader(root=course, secret="a course secret")
    finally:
        shutil.rmtree(top, ignore_errors=True)
