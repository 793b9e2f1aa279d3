"""What `drills grade` tells an instructor to act on, on the console, in report.html and
report.json, and on an ungradable notebook's feedback page.

One tiny class is graded once (`drills grade` with a Canvas roster, in this process): alice
hands in 01 (beside a stray copy, ignored) and 02; `ann lee` (an id rewritten to ann_lee),
bob (a notebook that is not valid JSON), carol (a catalogued mistake) and a folder named like
an HTML tag hand in 01 only. The roster has alice, ann_lee, bob, carol and zed, who handed
in nothing, with a name that is HTML; the HTML-named folder has no roster row.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import json
import re
from pathlib import Path

import nbformat
import nbgrader_course
import pytest

from autograder import cli
from autograder.course import course_report, report

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"
A, B = "01_exact_kl", "02_clipped_estimators"
HOSTILE = "<img src=x onerror=alert(1)>"
ZED = "<script>alert('zed')</script>"


def _put(root: Path, student: str, assignment: str, nb_text: str, name: str = "") -> None:
    folder = root / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    (folder / (name or f"{assignment}.ipynb")).write_text(nb_text, encoding="utf-8")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("class")
    root = tmp / "submitted"
    solution = (CORPUS / "solution.ipynb").read_text(encoding="utf-8")
    _put(root, "alice", A, solution)
    _put(root, "alice", A, solution, name="copy of my work.ipynb")
    _put(root, "alice", B, nbformat.writes(nbgrader_course.learner_notebook(B, "solution", None)))
    _put(root, "ann lee", A, solution)
    _put(root, "bob", A, (CORPUS / "broken_json.ipynb").read_text(encoding="utf-8"))
    _put(
        root,
        "carol",
        A,
        nbformat.writes(nbgrader_course.learner_notebook(A, "mistakes-1", "carol")),
    )
    _put(root, HOSTILE, A, solution)
    roster = tmp / "canvas.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,01_exact_kl (11)\n"
        "    Points Possible,,,,,7.00\n"
        "Alice A,1,,alice,S,\n"
        "Ann Lee,2,,ann_lee,S,\n"
        "Bob B,3,,bob,S,\n"
        "Carol C,4,,carol,S,\n"
        f'"{ZED}",5,,zed,S,\n',
        encoding="utf-8",
    )
    out = tmp / "out"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = cli.main(["grade", str(root), "--out", str(out), "--canvas-roster", str(roster)])
    assert rc == 0, err.getvalue()
    hostile_id = next(p.name for p in (out / "feedback").iterdir() if "onerror" in p.name)
    return {
        "root": root,
        "roster": roster,
        "out": out,
        "console": err.getvalue(),
        "body": json.loads((out / "report.json").read_text(encoding="utf-8")),
        "page": (out / "report.html").read_text(encoding="utf-8"),
        "hostile_id": hostile_id,
        "fingerprint": json.loads((out / "run.json").read_text())["fingerprint"]["secret"],
    }


def test_console_summary_names_every_error_warning_and_gap(run):
    """The mistake caught: a run that ends with only "graded N submissions", so an instructor
    never hears of the unreadable notebook, the rewritten id, the ignored copy, the missing 02s,
    or the roster's gaps (Roster.unmatched was filled and never printed)."""
    console = run["console"]
    assert "could not be graded (1):" in console
    assert re.search(r"\n  bob 01_exact_kl: .*not valid JSON", console)
    assert "warnings (" in console
    assert "  ann_lee 01_exact_kl: student id 'ann lee' was changed to 'ann_lee'" in console
    assert re.search(r"\n  alice 01_exact_kl: other notebooks in .* were not graded: ", console)
    assert "copy of my work.ipynb" in console
    assert "did not hand in (" in console
    for who in ("ann_lee", "bob", "carol", run["hostile_id"]):
        assert f"\n  {who} {B}\n" in console, who
    assert f"graded students not in the Canvas roster (1):\n  {run['hostile_id']}\n" in console
    assert "Canvas roster rows with no grade (" in console
    assert f"  {ZED} (zed) {A}: did not hand in" in console
    assert f"  Bob B (bob) {A}: could not be graded" in console


def test_console_summary_is_capped_for_a_large_class():
    """The mistake caught: a class of thousands printing every line of every group (or
    dropping the rest silently): each group shows its first 50, then how many more and where."""
    body = {
        "could_not_grade": {"count": 0, "listed": []},
        "warnings": {
            "count": 7000,
            "listed": [
                {"student": f"s{i}", "assignment": A, "text": "w\x1b[31m"} for i in range(5000)
            ],
        },
        "did_not_hand_in": {},
        "roster": None,
    }
    lines = course_report.console_summary(body, "OUT/report.html")
    assert lines[0] == "warnings (7000):"
    assert len(lines) == 1 + 50 + 1
    assert lines[1] == f"  s0 {A}: w\\u001b[31m"  # no escape code reaches the terminal
    assert lines[-1] == "  and 6950 more, see OUT/report.html"


def test_class_report_keeps_bounded_lists(monkeypatch):
    """The mistake caught: the class report holding every result (or an unbounded list) in
    memory for thousands of students: it keeps ids and short texts, at most LISTED of each,
    and counts the rest."""
    monkeypatch.setattr(course_report, "LISTED", 3)
    rep = course_report.ClassReport()
    for i in range(10):
        rep.add(
            report.SubmissionResult(
                f"s{i}", A, "p", 7.0, warnings=["x" * 10_000], error="unreadable " * 200
            )
        )
    body = rep.to_json()
    assert body["warnings"]["count"] == body["could_not_grade"]["count"] == 10
    assert len(body["warnings"]["listed"]) == len(body["could_not_grade"]["listed"]) == 3
    assert all(len(w["text"]) <= course_report.TEXT_CHARS for w in body["warnings"]["listed"])
    assert not any(isinstance(v, report.SubmissionResult) for v in vars(rep).values())


def test_report_json_lists_who_to_act_on(run):
    """The mistake caught: report.json counting problems without naming anyone: who could not
    be graded (and why, and their page), every warning, who did not hand in 02 (run students
    and the roster's zed), which students made each mistake, and the roster's gaps."""
    body, hid = run["body"], run["hostile_id"]
    (err,) = body["could_not_grade"]["listed"]
    assert (err["student"], err["assignment"]) == ("bob", A) and "not valid JSON" in err["reason"]
    assert err["feedback"] == f"feedback/bob/{A}.html"
    texts = {(w["student"], w["text"]) for w in body["warnings"]["listed"]}
    assert (
        "ann_lee",
        "student id 'ann lee' was changed to 'ann_lee' (unusual characters)",
    ) in texts
    assert any(s == "alice" and "were not graded" in t for s, t in texts)
    assert any(s == hid and HOSTILE in t for s, t in texts)
    missing = body["did_not_hand_in"][B]
    assert {w["student"] for w in missing} == {"ann_lee", "bob", "carol", hid, ""}
    assert {"student": "", "roster": f"{ZED} (zed)"} in missing
    made = {
        (d["id"], tuple(d["students"]))
        for f in body["assignments"][A]["functions"]
        for d in f["diagnoses"]
        if d["kind"] != "shape"
    }
    assert made and all(who == ("carol",) for _, who in made), made
    assert body["roster"]["unmatched"] == [hid]
    gaps = {(g["login"], g["assignment"], g["why"]) for g in body["roster"]["no_grade"]}
    assert gaps == {
        ("zed", A, "did not hand in"),
        ("bob", A, "could not be graded"),
        *((login, B, "did not hand in") for login in ("ann_lee", "bob", "carol", "zed")),
    }


def test_report_html_names_and_links_them_escaped(run):
    """The mistake caught: report.html without the sections an instructor acts on, a mistake's
    students not linked to their feedback pages, or a student-controlled name (a folder named
    like an <img> tag, a roster name holding <script>) written into the page as HTML."""
    page, hid = run["page"], run["hostile_id"]
    for heading in ("Could not be graded (1)", "Did not hand in (", "Warnings (", "Canvas roster"):
        assert heading in page, heading
    assert f'<a href="feedback/bob/{A}.html">bob</a>' in page
    assert "not valid JSON" in page
    assert "student id &#x27;ann lee&#x27; was changed to &#x27;ann_lee&#x27;" in page
    assert "copy of my work.ipynb" in page
    missing_b = re.search(rf'<p class="missing" data-assignment="{B}">(.*?)</p>', page).group(1)
    for who in ("ann_lee", "bob", "carol", hid, "&lt;script&gt;"):
        assert who in missing_b, who
    rows = re.findall(r'<tr class="diagnosis" data-id="[^"]+" data-kind="concept">.*?</tr>', page)
    assert rows and all(f'<a href="feedback/carol/{A}.html">carol</a>' in r for r in rows)
    assert f"Graded students with no row in the roster (1): {hid}" in page
    assert "<img" not in page and "<script" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "&lt;script&gt;" in page


def test_ungradable_page_shows_no_score_but_why_and_what_to_do(run):
    """The mistake caught: an unreadable notebook's page saying "Score: 0 / 7" while
    grades.csv and Canvas leave its cell empty: it must say it could not be graded, why,
    and what to do, and show no score (nor per-function zeros)."""
    page = (run["out"] / "feedback" / "bob" / f"{A}.html").read_text(encoding="utf-8")
    assert "Score:" not in page and "0 / " not in page
    assert "could not be graded" in page and "not valid JSON" in page
    assert "What to do:" in page and "download your notebook again" in page
    graded = (run["out"] / "feedback" / "alice" / f"{A}.html").read_text(encoding="utf-8")
    assert "Score: 7 / 7 points" in graded


def test_report_and_every_page_carry_the_date_version_and_secret_fingerprint(run):
    """The mistake caught: a report or feedback page that cannot be tied to the run that
    wrote it (when, which grader version, which secret: its fingerprint, never the secret)."""
    version = importlib.metadata.version("reward-drills")
    fp = run["fingerprint"]
    assert run["body"]["run"]["version"] == version
    assert run["body"]["run"]["secret_fingerprint"] == fp
    day = run["body"]["run"]["graded_at"][:10]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", day)
    pages = [run["page"]] + [
        p.read_text(encoding="utf-8") for p in (run["out"] / "feedback").rglob("*.html")
    ]
    assert len(pages) == 1 + 6  # alice's two, ann_lee, bob, carol, the HTML-named
    for text in pages:
        assert f"reward-drills {version}" in text and fp in text and day in text


def test_merge_prints_the_same_summary(run, tmp_path):
    """The mistake caught: `drills merge` of shards writing the report but printing nothing of
    it, so a class graded in shards never hears of its unreadable notebooks or roster gaps."""
    shards = [tmp_path / f"shard{k}" for k in (1, 2)]
    for k, out in enumerate(shards, 1):
        with contextlib.redirect_stderr(io.StringIO()):
            rc = cli.main(["grade", str(run["root"]), "--out", str(out), "--shard", f"{k}/2"])
        assert rc == 0
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        args = ["merge", *map(str, shards), "--out", str(tmp_path / "all")]
        assert cli.main([*args, "--canvas-roster", str(run["roster"])]) == 0
    merged, graded = (text.splitlines() for text in (err.getvalue(), run["console"]))
    head = "could not be graded (1):"
    assert merged[merged.index(head) :] == graded[graded.index(head) :]
