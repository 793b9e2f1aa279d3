"""Is exercises/ exactly what nbgrader generates from solutions/, and does --check notice when not?"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT, available_assignments

from autograder.notebooks import release


@pytest.mark.slow
def test_release_check_reports_a_stale_exercise(tmp_path, monkeypatch):
    """After a solution changes, does --check fail and name the notebook, and release fix it?"""
    # nbgrader converts the changed solution once; the three releases below reuse its output
    # (the solution does not change between them). Their subject is what release does with
    # nbgrader's output: report it, write it, find nothing left to write.
    generate, made = release.generate, {}

    def generate_once(assignments, root, out):
        key = (tuple(assignments), str(root))
        if key not in made:
            made[key] = tmp_path / f"generated-{len(made)}"
            generate(assignments, root, made[key])
        shutil.copytree(made[key], out, dirs_exist_ok=True)

    monkeypatch.setattr(release, "generate", generate_once)
    a = available_assignments()[0]
    for folder in ("solutions", "exercises"):
        shutil.copytree(ROOT / folder / a, tmp_path / folder / a)
    src = tmp_path / "solutions" / a / f"{a}.ipynb"
    nb = json.loads(src.read_text())
    nb["cells"][0]["source"] = ["# A changed title\n"]
    src.write_text(json.dumps(nb, indent=1))

    diff = release.release([a], root=tmp_path, check=True)
    assert diff and f"{a}/{a}.ipynb" in diff.changed
    assert "A changed title" in "".join(diff.changed[f"{a}/{a}.ipynb"])

    release.release([a], root=tmp_path)
    assert not release.release([a], root=tmp_path, check=True)
    assert not list((tmp_path / "exercises").glob(".*.new")), "staging folder left behind"
    assert len(made) == 1


@pytest.mark.slow
def test_a_solution_nbgrader_refuses_names_its_assignment_and_leaves_exercises_alone(tmp_path):
    """Catches a release that converts several assignments in one nbgrader process and then
    reports success, blames the wrong notebook or half-writes exercises/ when one fails."""
    good, bad = available_assignments()[:2]
    for a in (good, bad):
        for folder in ("solutions", "exercises"):
            shutil.copytree(ROOT / folder / a, tmp_path / folder / a)
    src = tmp_path / "solutions" / bad / f"{bad}.ipynb"
    nb = json.loads(src.read_text())
    graded = [c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")]
    graded[1]["metadata"]["nbgrader"]["grade_id"] = graded[0]["metadata"]["nbgrader"]["grade_id"]
    src.write_text(json.dumps(nb, indent=1))
    before = {p: p.read_bytes() for p in (tmp_path / "exercises").rglob("*") if p.is_file()}

    with pytest.raises(release.ReleaseError, match=f"generate_assignment {bad} failed"):
        release.release([good, bad], root=tmp_path)
    after = {p: p.read_bytes() for p in (tmp_path / "exercises").rglob("*") if p.is_file()}
    assert after == before


@pytest.mark.slow
def test_committed_exercises_match_generated_and_the_cli_says_so():
    """Would `drills release --check` pass on this tree (no hand edits, nothing stale), with
    exit status 0 (the CI gate)? One release of every assignment serves both questions: the
    command prints the diff's summary when it fails."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "autograder.cli", "release", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "up to date" in proc.stdout
    assert "holds no answer key" in proc.stdout  # it scanned them (course/answer_key.py)


@pytest.mark.parametrize("assignment", available_assignments())
def test_source_notebook_carries_no_outputs(assignment):
    """An instructor who edits solutions/<id>/<id>.ipynb in Jupyter (docs/authoring.md, step 2)
    and saves it run would commit outputs and execution counts into the source: exercises/ hides
    it (nbgrader clears outputs), nothing else would."""
    nb = json.loads((ROOT / "solutions" / assignment / f"{assignment}.ipynb").read_text())
    ran = [
        c.get("id")
        for c in nb["cells"]
        if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count") is not None)
    ]
    assert not ran, (
        f"solutions/{assignment}/{assignment}.ipynb: cells {ran} carry outputs or an execution "
        "count: clear them (Jupyter: Edit, Clear Outputs of All Cells) and save"
    )
