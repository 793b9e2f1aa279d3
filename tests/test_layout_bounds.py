"""Finding submissions when a folder is hostile or careless: a chain of folders deeper than
Python's stack, a folder of tens of thousands of files, a shell glob over student folders, a
folder named like another folder's error row, and names outside ASCII. Each must give the
right rows (or a named error row) with the rest of the class found."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import unicodedata
from pathlib import Path

from autograder.course.exports.canvas import Roster, canvas_csv
from autograder.course.report import Row
from autograder.engine import layout

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"
A = "01_exact_kl"


def _hand_in(root: Path, student: str, assignment: str = A) -> Path:
    folder = root / student / assignment
    folder.mkdir(parents=True)
    shutil.copyfile(CORPUS / "solution.ipynb", folder / f"{assignment}.ipynb")
    return folder


def _chain(top: Path, depth: int) -> None:
    """``depth`` nested empty folders under ``top``, made without recursion."""
    os.makedirs(top, exist_ok=True)
    here = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=here)
            nxt = os.open("d", os.O_RDONLY, dir_fd=here)
            os.close(here)
            here = nxt
    finally:
        os.close(here)


def _unchain(top: Path) -> None:
    """Remove what :func:`_chain` made, deepest first and without recursion (shutil.rmtree,
    and so pytest's own clean-up of old temporary folders, recurses and would fail on it)."""
    path = top
    while (path / "d").is_dir():
        path = path / "d"
    while path != top:
        os.rmdir(path)
        path = path.parent
    os.rmdir(top)


def test_a_chain_of_folders_deeper_than_the_stack_is_one_error_row(tmp_path):
    """1,200 nested folders in one student's hand-in (a cloned repository brings such chains)
    made the walk raise RecursionError and stopped the whole class with no grades.csv. Is it
    now that student's error row, naming the depth, with everyone else found?"""
    root = tmp_path / "submitted"
    _hand_in(root, "alice")
    deep = _hand_in(root, "mallory")
    _chain(deep / "repo", 1200)
    _hand_in(root, "zoe")
    try:
        subs = {s.student: s for s in layout.discover([root])}
    finally:
        _unchain(deep / "repo")
    assert set(subs) == {"alice", "mallory", "zoe"}
    assert subs["alice"].error is None and subs["zoe"].error is None
    assert "more than 32 deep" in subs["mallory"].error


def test_a_folder_of_too_many_files_is_one_error_row(tmp_path):
    """A student folder holding more entries than the budget (a data set, a virtual
    environment) must not be read to the end: is it an error row that says so?"""
    root = tmp_path / "submitted"
    _hand_in(root, "alice")
    big = _hand_in(root, "bob") / "data"
    big.mkdir()
    for i in range(layout.MAX_ENTRIES + 5):
        (big / f"{i}.txt").touch()
    subs = {s.student: s for s in layout.discover([root])}
    assert subs["alice"].error is None
    assert "more than 20,000 files and folders" in subs["bob"].error


def test_a_glob_over_student_folders_gives_one_row_per_student(tmp_path):
    """`drills grade submitted/*/01_exact_kl` read each folder as a root whose lone notebook
    belonged to a student named `01_exact_kl`: one row for the whole class, the others
    "ignored". Is each path now its parent's student, as `drills grade submitted` reads it?"""
    root = tmp_path / "submitted"
    for s in ("alice", "bob", "carol"):
        _hand_in(root, s)
    globbed = sorted(root.glob(f"*/{A}"))
    rows = [(s.student, s.assignment, s.error) for s in layout.discover(globbed)]
    assert rows == [(s, A, None) for s in ("alice", "bob", "carol")]
    whole = [(s.student, s.assignment, s.error) for s in layout.discover([root])]
    assert rows == whole


def test_a_notebook_given_from_inside_its_folder_is_its_students(tmp_path, monkeypatch):
    """The same notebook named by a relative path from inside its folder was graded as a
    student named after the file: is it the same student as from the course folder?"""
    root = tmp_path / "submitted"
    folder = _hand_in(root, "alice")
    monkeypatch.chdir(folder)
    (sub,) = layout.discover([f"{A}.ipynb"])
    assert (sub.student, sub.assignment, sub.error) == ("alice", A, None)


def test_no_folder_name_becomes_another_folders_error_row_id(tmp_path):
    """`ann lee` and `ann_lee` collide and get error rows under suffixed ids; a third folder
    named exactly like one of those ids lost its notebook as a "duplicate". Can any folder's
    name give a collision row's id now?"""
    root = tmp_path / "submitted"
    _hand_in(root, "ann lee")
    _hand_in(root, "ann_lee")
    forged = layout.collision_id("ann_lee", "ann lee")
    _hand_in(root, forged)
    subs = layout.discover([root])
    ids = [s.student for s in subs]
    assert len(ids) == 3 and len(set(ids)) == 3, ids
    (third,) = [s for s in subs if s.error is None]
    assert third.student != forged and third.given_id == forged


def test_accented_names_keep_their_letters_and_their_canvas_row(tmp_path):
    """`josé` became `jos_`: his Canvas row (SIS Login ID josé) stayed empty and a new `jos_`
    row was appended. Does the id keep the letter, and the grade land on his own row?"""
    root = tmp_path / "submitted"
    _hand_in(root, "josé")
    _hand_in(root, "王芳")
    found = {s.student for s in layout.discover([root])}
    assert found == {"josé", "王芳"}
    roster = Roster(
        rows=[
            {
                "Student": "Pérez, José",
                "ID": "11",
                "SIS User ID": "",
                # a login exported in decomposed form still matches
                "SIS Login ID": unicodedata.normalize("NFD", "josé"),
                "Section": "A",
            }
        ],
        columns=[f"{A} (101)"],
    )
    rows = [Row(A, "josé", "", 6.5, 7.0)]
    text = canvas_csv(rows, roster)
    table = list(csv.reader(io.StringIO(text)))
    assert len(table) == 3, table  # header, points possible, José's own row
    assert table[2][0] == "Pérez, José" and table[2][-1] == "6.5"
    assert roster.unmatched == []


# -- what a learner's code leaves in its sandbox folder ----------------------------------------


def test_remove_tree_takes_any_depth_and_follows_no_link(tmp_path):
    """shutil.rmtree recursed once per level: a learner's 3,000 nested folders made the grader's
    clean-up raise RecursionError. Does remove_tree take them, and leave what a link points
    at untouched?"""
    from autograder.engine.files import remove_tree

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    box = tmp_path / "box"
    _chain(box, 3000)
    (box / "to-outside").symlink_to(outside)
    (box / "file-link").symlink_to(outside / "keep.txt")
    for i in range(50):
        (box / f"w{i}").mkdir()
    remove_tree(box)
    assert not os.path.lexists(box)
    assert (outside / "keep.txt").read_text() == "mine"
    remove_tree(box)  # gone already: no error


def test_a_learner_who_leaves_a_deep_chain_in_its_folder_is_graded(tmp_path):
    """A solution that also makes 3,000 nested folders in its working folder: the grader's
    clean-up crashed on it ("the grader failed on this submission: RecursionError") and left
    the sandbox folder in the temporary folder. Is the work graded as any other, and the
    folder gone?"""
    import tempfile

    from autograder.course.grade_cli import Grader, grade_course

    nb = json.loads((CORPUS / "solution.ipynb").read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("solution"):
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = (
                "import os\nfor _ in range(3000):\n    os.mkdir('d')\n    os.chdir('d')\n" + src
            )
            break
    folder = tmp_path / "submitted" / "eve" / A
    folder.mkdir(parents=True)
    (folder / f"{A}.ipynb").write_text(json.dumps(nb))
    mine = f"drills-child-{os.getpid()}-*"  # this process's (other test workers make their own)
    before = set(Path(tempfile.gettempdir()).glob(mine))
    out = tmp_path / "out"
    grader = Grader(hidden=[out.resolve()])
    stats = grade_course([tmp_path / "submitted"], out, grader)
    assert stats.could_not_grade == 0
    (row,) = list(csv.DictReader((out / "grades.csv").open()))
    assert row["score"] == "7.0", row
    left = set(Path(tempfile.gettempdir()).glob(mine)) - before
    assert not left, f"sandbox folders left behind: {sorted(left)}"


def test_a_student_whose_whole_folder_is_too_deep_is_not_said_to_have_not_handed_in(tmp_path):
    """`drills grade submitted` with one student's folder too deep to read gave that student an
    `unknown` row (0 points possible) and also a blank 01 row listed under "did not hand in":
    a student who handed in was told they had not. Is it one error row per assignment of the
    run, under "could not be graded" only, with no `unknown` row?"""
    from autograder.course.grade_cli import Grader, grade_course

    root = tmp_path / "submitted"
    _hand_in(root, "alice")
    repo = _hand_in(root, "dora") / "repo"
    _chain(repo, 40)
    out = tmp_path / "out"
    try:
        grade_course([root], out, Grader(hidden=[out.resolve()]))
    finally:
        _unchain(repo)
    table = csv.DictReader((out / "grades.csv").open())
    rows = {(r["assignment"], r["student_id"]): r for r in table}
    assert set(rows) == {(A, "alice"), (A, "dora")}, sorted(rows)
    assert rows[(A, "alice")]["score"] == "7.0"
    assert rows[(A, "dora")]["score"] == "" and rows[(A, "dora")]["max_score"] == "7.0"
    body = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert body["did_not_hand_in"] == {}, body["did_not_hand_in"]
    (err,) = [e for e in body["could_not_grade"]["listed"] if e["student"] == "dora"]
    assert err["assignment"] == A and "more than 32 deep" in err["reason"], err


def test_a_given_folder_that_holds_nothing_is_named(tmp_path):
    """`drills grade sec1 sec2` where sec1 is empty gave no row and no word about sec1. Is
    it named (for the console), without a row for a student who does not exist?"""
    (tmp_path / "sec1").mkdir()
    _hand_in(tmp_path / "sec2" / "submitted", "bob")
    notes: list[str] = []
    subs = layout.discover([tmp_path / "sec1", tmp_path / "sec2"], notes=notes)
    assert [(s.student, s.error) for s in subs] == [("bob", None)]
    assert notes == [f"{tmp_path / 'sec1'} {layout.HOLDS_NOTHING}"]


def test_an_output_folder_that_cannot_be_written_is_said_not_a_traceback(tmp_path, capsys):
    """`--out` in a folder the instructor may not write ended in a PermissionError traceback.
    Is it one line naming the folder, with exit status 2?"""
    from autograder import cli

    _hand_in(tmp_path / "submitted", "alice")
    locked = tmp_path / "locked"
    locked.mkdir()
    out = locked / "out"

    def refuse(self, *a, **k):
        raise PermissionError(13, "Permission denied", str(out))

    import pytest

    with pytest.MonkeyPatch.context() as mp:
        from autograder.course import results_cache

        mp.setattr(results_cache.ResultsCache, "lock", refuse)
        rc = cli.main(["grade", str(tmp_path / "submitted"), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert f"cannot write {out}: Permission denied" in err


def test_a_roster_student_whose_folders_collided_is_not_said_to_have_not_handed_in():
    """`ann lee` and `ann_lee` both handed in; their rows are `ann_lee~…` error rows. The roster
    row of login `ann_lee` was listed as "did not hand in" and the two rows as students
    missing from the roster: both untrue. Are they told as one student not graded?"""
    roster = Roster(
        rows=[{"Student": "Lee, Ann", "ID": "12", "SIS User ID": "", "SIS Login ID": "ann_lee"}],
        columns=[f"{A} (101)"],
    )
    rows = [
        Row(A, layout.collision_id("ann_lee", "ann lee"), "", 0.0, 7.0, graded=False),
        Row(A, layout.collision_id("ann_lee", "ann_lee"), "", 0.0, 7.0, graded=False),
    ]
    canvas_csv(rows, roster)
    assert roster.unmatched == []
    (row,) = roster.no_grade
    assert row["why"].startswith("could not be graded: two folders give this id")


def test_a_fifo_named_on_the_command_line_is_its_students_row(tmp_path):
    """Two students' notebooks that are FIFOs, named as files (`submitted/*/01_exact_kl/*.ipynb`):
    each was said not to exist and both became a student `01_exact_kl`, two rows under one id.
    Is each its own student's error row, saying what it is?"""
    root = tmp_path / "submitted"
    paths = []
    for s in ("ann", "bob"):
        (root / s / A).mkdir(parents=True)
        os.mkfifo(root / s / A / f"{A}.ipynb")
        paths.append(root / s / A / f"{A}.ipynb")
    subs = layout.discover(paths)
    assert [(s.student, s.assignment) for s in subs] == [("ann", A), ("bob", A)]
    assert all("is not a regular file" in s.error for s in subs)
