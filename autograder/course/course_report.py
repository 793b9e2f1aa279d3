"""report.html and report.json: what a class got wrong, per assignment and graded function.

For each assignment: the number of submissions and the distribution of total scores;
for each graded function: the distribution of its scores, how many got full marks,
did not attempt it or could not be graded, and what the failing ones got wrong: each
diagnosis ranked by how many students it names, with its text. Failures that no
diagnosis explains are counted apart ("unrecognised").

Diagnoses are read through :func:`diagnoses_of`, the one place that turns a graded
function into a list of ``Diagnosis(kind, id, text)``. Today a function carries at
most one catalogued mistake (kind ``"mistake"``). When a FunctionResult carries a
list ``diagnoses`` of several kinds (a conceptual mistake, a missing validation, an
error shape), each is counted the same way under its own kind.

Figures are inline SVG drawn by hand (no plotting library to import: writing the report
of a small class costs milliseconds, not a matplotlib start-up), so report.html is one
self-contained file whose bars and dots carry their counts. report.json holds the same
counts for programs and tests. Memory is bounded by the number of distinct scores
and diagnoses, not by the number of submissions.

What an instructor acts on is listed too, as ids and short texts (never results): who could
not be graded and why, every warning (an id rewritten, a notebook ignored), who did not hand
an assignment in, which students made each recognised mistake (each linked to their feedback
page), and with a Canvas roster who has no roster row and which roster rows got no grade.
Each list holds at most LISTED items (a count says how many there were), so a class of
thousands still makes a report of bounded size. :func:`console_summary` is the same lists
as the lines `drills grade` prints.
"""

from __future__ import annotations

import html
import json
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.course.report import SubmissionResult, feedback_path, run_line, write_atomic
from autograder.scoring.evaluate import FunctionResult


@dataclass(frozen=True)
class Diagnosis:
    kind: str  # "mistake" (catalogued); later also e.g. "validation", "error-shape"
    id: str
    text: str


def diagnoses_of(f: FunctionResult) -> list[Diagnosis]:
    """What the feedback told the learner was wrong with ``f``, as a list.

    Reads ``f.diagnoses`` (items with ``kind``, ``id`` and ``text``/``diagnosis``,
    as objects or dicts) when the result has it, else the single catalogued
    ``mistake``/``diagnosis`` pair.
    """
    out = []
    for d in getattr(f, "diagnoses", None) or []:
        get = d.get if isinstance(d, dict) else (lambda k, d=d: getattr(d, k, None))
        kind = str(get("kind") or "mistake")
        ident = str(get("id") or get("mistake") or get("text") or get("diagnosis") or kind)
        text = str(get("text") or get("diagnosis") or get("message") or ident)
        out.append(Diagnosis(kind, ident, text))
    if not out and f.mistake:
        out.append(Diagnosis("mistake", f.mistake, f.diagnosis or f.mistake))
    return out


@dataclass
class FunctionStats:
    points: float
    submissions: int = 0
    full_marks: int = 0
    not_attempted: int = 0
    could_not_grade: int = 0
    failed: int = 0
    unrecognised: int = 0
    scores: Counter = field(default_factory=Counter)
    diagnoses: Counter = field(default_factory=Counter)  # Diagnosis -> students
    who: dict[Diagnosis, list[str]] = field(default_factory=dict)  # the first LISTED students

    def add(self, f: FunctionResult, student: str = "") -> None:
        self.submissions += 1
        self.scores[f.score] += 1
        if f.error:
            self.could_not_grade += 1
        elif not f.attempted:
            self.not_attempted += 1
        elif f.score >= f.points:
            self.full_marks += 1
        else:
            self.failed += 1
            found = diagnoses_of(f)
            if not found:
                self.unrecognised += 1
            for d in dict.fromkeys(found):  # one count per student and diagnosis
                self.diagnoses[d] += 1
                who = self.who.setdefault(d, [])
                if len(who) < LISTED:
                    who.append(student)

    def ranked(self) -> list[dict[str, Any]]:
        items = sorted(self.diagnoses.items(), key=lambda kv: (-kv[1], kv[0].kind, kv[0].id))
        return [
            {
                "kind": d.kind,
                "id": d.id,
                "text": d.text,
                "count": n,
                "students": self.who.get(d, []),
            }
            for d, n in items
        ]


@dataclass
class AssignmentStats:
    max_score: float
    submissions: int = 0
    could_not_grade: int = 0
    totals: Counter = field(default_factory=Counter)
    functions: dict[str, FunctionStats] = field(default_factory=dict)
    # [student, why] of the first NOT_GRADED_LISTED that could not be graded: exported as an
    # empty cell (grades.csv, canvas.csv), so the report says why
    not_graded: list[list[str]] = field(default_factory=list)


NOT_GRADED_LISTED = 200
DID_NOT_HAND_IN = "did not hand in"
COULD_NOT_BE_GRADED = "could not be graded"


def roster_label(item: dict[str, str]) -> str:
    """A roster row as a person reads it: ``Name (login)``, or whichever of the two it has."""
    name, login = item.get("name", "").strip(), item.get("login", "").strip()
    if name and login and name != login:
        return f"{name} ({login})"
    return name or login or "(a roster row with no name)"


# the most items the report keeps of each list below (errors, warnings, each mistake's students)
LISTED = 5000
TEXT_CHARS = 500  # of a reason or a warning


@dataclass
class Listed:
    """The first LISTED items of a list, and how many there were in all."""

    count: int = 0
    items: list[dict[str, str]] = field(default_factory=list)

    def add(self, **item: str) -> None:
        self.count += 1
        if len(self.items) < LISTED:
            self.items.append(item)

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "listed": self.items}


def _why(r: SubmissionResult) -> list[str]:
    return [r.student, (r.error or "")[:300]]


class ClassReport:
    """Counters filled one result at a time (:meth:`add`), written by :meth:`write`."""

    def __init__(self) -> None:
        self.assignments: dict[str, AssignmentStats] = {}
        self.unidentified = 0  # notebooks that could not be tied to an assignment
        self.unidentified_why: list[list[str]] = []  # [student, why] of the first listed
        self.errors = Listed()  # {student, assignment, reason, feedback}
        self.warnings = Listed()  # {student, assignment, text, feedback}
        # set by gradebook.assemble once every result is in:
        self.did_not_hand_in: dict[str, list[str]] = {}  # assignment -> students of the run
        self.roster: dict[str, Any] | None = None  # unmatched, no_grade (with --canvas-roster)
        self.run: dict[str, str] | None = None  # report.run_info

    def add(self, r: SubmissionResult) -> None:
        page = feedback_path(r.student, r.assignment)
        if r.error:
            self.errors.add(
                student=r.student,
                assignment=r.assignment,
                reason=r.error[:TEXT_CHARS],
                feedback=page,
            )
        for w in r.warnings:
            self.warnings.add(
                student=r.student, assignment=r.assignment, text=w[:TEXT_CHARS], feedback=page
            )
        if not r.functions:
            self.unidentified += 1
            if len(self.unidentified_why) < NOT_GRADED_LISTED:
                self.unidentified_why.append(_why(r))
            return
        a = self.assignments.setdefault(r.assignment, AssignmentStats(r.max_score))
        a.submissions += 1
        a.totals[r.score] += 1
        if r.error:
            a.could_not_grade += 1
            if len(a.not_graded) < NOT_GRADED_LISTED:
                a.not_graded.append(_why(r))
        for f in r.functions:
            a.functions.setdefault(f.function, FunctionStats(f.points)).add(f, r.student)

    def set_gaps(
        self,
        missing: list[tuple[str, str]],
        roster_unmatched: list[str] | None = None,
        roster_no_grade: list[dict[str, str]] | None = None,
    ) -> None:
        """Who has no grade besides those who could not be graded: ``missing`` (assignment,
        student) pairs of the run's students without a submission (report.missing_rows) and,
        with a roster, its students without a row in the run and its rows without a grade
        (:attr:`canvas.Roster.no_grade`). Holds ids and short labels only."""
        roster_of: dict[str, str] = {}
        for item in roster_no_grade or []:
            if item["student"]:
                roster_of.setdefault(item["student"], roster_label(item))
        gaps: dict[str, list[dict[str, str]]] = {}
        for a, student in missing:
            gaps.setdefault(a, []).append(
                {"student": student, "roster": roster_of.get(student, "")}
            )
        for item in roster_no_grade or []:
            if not item["student"] and item["why"] == DID_NOT_HAND_IN:
                gaps.setdefault(item["assignment"], []).append(
                    {"student": "", "roster": roster_label(item)}
                )
        self.did_not_hand_in = {a: gaps[a] for a in sorted(gaps)}
        if roster_unmatched is not None or roster_no_grade is not None:
            self.roster = {
                "unmatched": list(roster_unmatched or []),
                "no_grade": list(roster_no_grade or []),
            }

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "run": self.run,
            "assignments": {},
            "unidentified": self.unidentified,
            "unidentified_why": self.unidentified_why,
            "could_not_grade": self.errors.to_json(),
            "warnings": self.warnings.to_json(),
            "did_not_hand_in": self.did_not_hand_in,
            "roster": self.roster,
        }
        for name in sorted(self.assignments):
            a = self.assignments[name]
            body["assignments"][name] = {
                "max_score": a.max_score,
                "submissions": a.submissions,
                "could_not_grade": a.could_not_grade,
                "not_graded": a.not_graded,
                "mean_score": round(sum(s * n for s, n in a.totals.items()) / a.submissions, 3),
                "score_counts": sorted([s, n] for s, n in a.totals.items()),
                "functions": [
                    {
                        "function": fname,
                        "points": f.points,
                        "submissions": f.submissions,
                        "full_marks": f.full_marks,
                        "not_attempted": f.not_attempted,
                        "could_not_grade": f.could_not_grade,
                        "failed": f.failed,
                        "unrecognised": f.unrecognised,
                        "score_counts": sorted([s, n] for s, n in f.scores.items()),
                        "diagnoses": f.ranked(),
                    }
                    for fname, f in a.functions.items()
                ],
            }
        return body

    def write(self, out: Path) -> dict[str, Any]:
        """Write report.json and report.html; return report.json's body."""
        body = self.to_json()
        write_atomic(out / "report.json", json.dumps(body, indent=1, ensure_ascii=False) + "\n")
        write_atomic(out / "report.html", report_html(body))
        return body


# -- the page ----------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem} h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #ccc}
h3{font-size:1.05rem;margin-top:1.4rem}
table{border-collapse:collapse;width:100%;font-size:.9rem;margin:.4rem 0}
td,th{border-bottom:1px solid #ddd;padding:.25rem .4rem;text-align:left;vertical-align:top}
td.n{text-align:right;white-space:nowrap} .muted{color:#666} svg.figure{max-width:100%;height:auto}
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _pct(n: int, total: int) -> str:
    return f"{100.0 * n / total:.0f} %" if total else "–"


def _figure(a: dict[str, Any]) -> str:
    """One inline SVG per assignment: the distribution of total scores (bars, left), and of
    each function's score as a fraction of its points (one row per function, dot area ~
    students, right). Drawn by hand: no plotting library to import, text stays text, and each
    bar and dot carries its count in a tooltip (``<title>``) and in ``data-`` attributes."""
    fns = a["functions"]
    lw, rw, gap = 300.0, 420.0, 150.0  # plot widths, room for function names
    top_pad, bottom_pad = 26.0, 34.0
    rows_h = max(120.0, 18.0 * len(fns))
    width = 40.0 + lw + gap + rw + 16.0
    height = top_pad + rows_h + bottom_pad
    out = [
        f'<svg class="figure" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        f'font-family="system-ui,sans-serif" font-size="10">',
        f"<title>score distributions of {_e(a.get('name', ''))}</title>",
    ]
    # left: total scores
    x0, y0 = 40.0, top_pad + rows_h  # the left panel's origin (bottom left)
    top = max(float(a["max_score"]), 1.0)
    most = max([n for _, n in a["score_counts"]] or [1])
    bar = max(2.0, lw / 30)
    out.append(f'<text x="{x0 + lw / 2:.1f}" y="14" text-anchor="middle">total score</text>')
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x0 + lw}" y2="{y0}" stroke="#444"/>')
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{top_pad}" stroke="#444"/>')

    def sx(score: float) -> float:  # bar centres stay inside the axes
        return x0 + bar / 2 + 1 + (lw - bar - 2) * float(score) / top

    for tick in (0.0, top / 2, top):
        tx = sx(tick)
        out.append(f'<text x="{tx:.1f}" y="{y0 + 12:.1f}" text-anchor="middle">{tick:g}</text>')
    out.append(f'<text x="{x0 - 4}" y="{top_pad + 4:.1f}" text-anchor="end">{most}</text>')
    out.append(f'<text x="{x0 - 4}" y="{y0:.1f}" text-anchor="end">0</text>')
    out.append(
        f'<text x="{x0 + lw / 2:.1f}" y="{height - 6:.1f}" text-anchor="middle">'
        "points (bar height: students)</text>"
    )
    for score, n in a["score_counts"]:
        h = rows_h * n / most
        bx = sx(score) - bar / 2
        out.append(
            f'<rect class="total" data-score="{score:g}" data-students="{n}" x="{bx:.1f}" '
            f'y="{y0 - h:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="#3b6ea8">'
            f"<title>{score:g} points: {n} students</title></rect>"
        )
    # right: per function, fraction of its points
    x1 = x0 + lw + gap
    out.append(
        f'<text x="{x1 + rw / 2:.1f}" y="14" text-anchor="middle">'
        "score per function (dot area: students)</text>"
    )
    out.append(f'<line x1="{x1}" y1="{y0}" x2="{x1 + rw}" y2="{y0}" stroke="#444"/>')
    for tick in (0.0, 0.5, 1.0):
        tx = x1 + rw * tick
        out.append(f'<line x1="{tx:.1f}" y1="{top_pad}" x2="{tx:.1f}" y2="{y0}" stroke="#ddd"/>')
        out.append(f'<text x="{tx:.1f}" y="{y0 + 12:.1f}" text-anchor="middle">{tick:g}</text>')
    out.append(
        f'<text x="{x1 + rw / 2:.1f}" y="{height - 6:.1f}" text-anchor="middle">'
        "fraction of the function's points</text>"
    )
    step = rows_h / max(1, len(fns))
    for row, f in enumerate(fns):
        cy = top_pad + step * (row + 0.5)
        out.append(
            f'<text x="{x1 - 6:.1f}" y="{cy + 3:.1f}" text-anchor="end">{_e(f["function"])}</text>'
        )
        for score, n in f["score_counts"]:
            frac = float(score) / f["points"] if f["points"] else 0.0
            r = 2.0 + 7.0 * (n / max(1, f["submissions"])) ** 0.5
            out.append(
                f'<circle class="function" data-function="{_e(f["function"])}" '
                f'data-score="{score:g}" data-students="{n}" cx="{x1 + rw * frac:.1f}" '
                f'cy="{cy:.1f}" r="{r:.1f}" fill="#3b6ea8" fill-opacity="0.7">'
                f"<title>{_e(f['function'])}: {score:g} of {f['points']:g} points, "
                f"{n} students</title></circle>"
            )
    out.append("</svg>")
    return "".join(out)


def _not_graded(listed: list[list[str]], count: int) -> str:
    """Who could not be graded and why: their grade is exported as an empty cell, not a 0."""
    items = "".join(f"<li>{_e(who)}: {_e(why)}</li>" for who, why in listed)
    more = (
        f"<li>and {count - len(listed)} more (see results.json)</li>" if count > len(listed) else ""
    )
    return (
        f"<details><summary>{count} could not be graded: no grade is exported for them "
        "(an empty cell in grades.csv and canvas.csv, not a 0)</summary>"
        f"<ul>{items}{more}</ul></details>"
    )


def _href(path: str) -> str:
    """A relative link to ``path`` (an output-folder path), safe in an attribute."""
    return _e(urllib.parse.quote(path, safe="/"))


def _student_link(student: str, assignment: str) -> str:
    """The student's id, linked to their feedback page for ``assignment``."""
    return f'<a href="{_href(feedback_path(student, assignment))}">{_e(student)}</a>'


def _more(listed: dict[str, Any], where: str = "results.json") -> str:
    extra = listed["count"] - len(listed["listed"])
    return f"<p>and {extra} more (see {where}).</p>" if extra > 0 else ""


def _student_table(
    listed: dict[str, Any] | None,
    anchor: str,
    title: str,
    intro: str,
    row: tuple[str, str, str],
    none: str,
) -> list[str]:
    """A section of one row per student and assignment, each student linked to their page:
    ``row`` is (the rows' class, the third column's heading, the item's key that fills it)."""
    listed = listed or {"count": 0, "listed": []}
    out = [f'<h2 id="{anchor}">{title} ({listed["count"]})</h2>']
    if not listed["count"]:
        return out + [f"<p>{none}</p>"]
    cls, heading, key = row
    out.append(f"<p>{intro}</p>")
    out.append(f"<table><tr><th>student</th><th>assignment</th><th>{heading}</th></tr>")
    for item in listed["listed"]:
        out.append(
            f'<tr class="{cls}"><td>{_student_link(item["student"], item["assignment"])}'
            f"</td><td>{_e(item['assignment'])}</td><td>{_e(item[key])}</td></tr>"
        )
    out.append("</table>" + _more(listed))
    return out


def _actions(body: dict[str, Any]) -> list[str]:
    """The sections an instructor acts on: who could not be graded, who did not hand in, every
    warning, and the Canvas roster's gaps."""
    out = []
    out += _student_table(
        body.get("could_not_grade"),
        "could-not-be-graded",
        "Could not be graded",
        "No grade is exported for these (an empty cell in grades.csv and canvas.csv, not a 0); "
        "each feedback page says why and what the student can do.",
        ("not-graded", "reason", "reason"),
        "Every submission was graded.",
    )
    gaps = body.get("did_not_hand_in") or {}
    total = sum(len(v) for v in gaps.values())
    out.append(f'<h2 id="did-not-hand-in">Did not hand in ({total})</h2>')
    if total:
        out.append(
            "<p>Per assignment: students of this run who handed in another assignment but "
            "not this one"
            + (
                ", and students of the Canvas roster who handed in nothing"
                if body.get("roster")
                else ""
            )
            + ". No grade is exported for them.</p>"
        )
        for a, who in gaps.items():
            names = ", ".join(
                _e(w["student"] or w["roster"])
                + (
                    f' <span class="muted">({_e(w["roster"])})</span>'
                    if w["student"] and w["roster"]
                    else ""
                )
                for w in who
            )
            out.append(
                f'<p class="missing" data-assignment="{_e(a)}"><b>{_e(a)}</b> ({len(who)}): {names}</p>'
            )
    else:
        out.append("<p>Everyone in this run handed in every assignment of the run.</p>")
    out += _student_table(
        body.get("warnings"),
        "warnings",
        "Warnings",
        "Graded, but worth a look: a student id rewritten, another notebook or a second "
        "submission ignored, a time budget used up.",
        ("warning", "warning", "text"),
        "None.",
    )
    roster = body.get("roster")
    if roster is not None:
        out.append('<h2 id="roster">Canvas roster</h2>')
        unmatched = roster["unmatched"]
        out.append(
            f"<p>Graded students with no row in the roster ({len(unmatched)}): "
            + (", ".join(_e(u) for u in unmatched) if unmatched else "none")
            + (
                ". canvas.csv gives them rows of their own (their id as the login); "
                "check their Canvas login."
                if unmatched
                else "."
            )
            + "</p>"
        )
        no_grade = roster["no_grade"]
        out.append(f"<p>Roster rows with no grade for an assignment ({len(no_grade)}):</p>")
        if no_grade:
            out.append("<table><tr><th>roster student</th><th>assignment</th><th>why</th></tr>")
            for item in no_grade:
                who = _e(roster_label(item))
                if item["student"] and item["why"] == COULD_NOT_BE_GRADED:
                    who = (
                        f'<a href="{_href(feedback_path(item["student"], item["assignment"]))}">'
                        f"{who}</a>"
                    )
                out.append(
                    f'<tr class="no-grade"><td>{who}</td><td>{_e(item["assignment"])}</td>'
                    f"<td>{_e(item['why'])}</td></tr>"
                )
            out.append("</table>")
    return out


def report_html(body: dict[str, Any]) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>Class report</title>',
        f"<style>{_CSS}</style></head><body>",
        "<h1>Class report</h1>",
    ]
    if body.get("run"):
        out.append(f'<p class="run muted">{_e(run_line(body["run"]))}</p>')
    out += _actions(body)
    if body["unidentified"]:
        out.append(
            f"<p>{body['unidentified']} notebooks could not be tied to an assignment "
            "(see grades.csv and results.json).</p>"
        )
        out.append(_not_graded(body.get("unidentified_why", []), body["unidentified"]))
    for name, a in body["assignments"].items():
        n = a["submissions"]
        out.append(f'<h2 id="{_e(name)}">{_e(name)}</h2>')
        out.append(
            f"<p>{n} submissions; mean {a['mean_score']:g} of {a['max_score']:g} points"
            + (f"; {a['could_not_grade']} could not be graded" if a["could_not_grade"] else "")
            + ".</p>"
        )
        if a["could_not_grade"]:
            out.append(_not_graded(a.get("not_graded", []), a["could_not_grade"]))
        out.append(_figure(dict(a, name=name)))
        for f in a["functions"]:
            m = f["submissions"]
            out.append(f"<h3><code>{_e(f['function'])}</code> ({f['points']:g} points)</h3>")
            out.append(
                "<p>"
                + "; ".join(
                    [
                        f"full marks {f['full_marks']} ({_pct(f['full_marks'], m)})",
                        f"some checks failed {f['failed']}",
                        f"not attempted {f['not_attempted']}",
                        f"could not be graded {f['could_not_grade']}",
                    ]
                )
                + "</p>"
            )
            if not f["failed"]:
                continue
            out.append(
                "<table><tr><th>students</th><th>share of submissions</th><th>kind</th><th>diagnosis</th><th>who</th></tr>"
            )
            for d in f["diagnoses"]:
                who = d.get("students", [])
                links = ", ".join(_student_link(st, name) for st in who)
                if d["count"] > len(who):
                    links += f", and {d['count'] - len(who)} more (see results.json)"
                out.append(
                    f'<tr class="diagnosis" data-id="{_e(d["id"])}" data-kind="{_e(d["kind"])}">'
                    f'<td class="n">{d["count"]}</td><td class="n">{_pct(d["count"], m)}</td>'
                    f"<td>{_e(d['kind'])}</td><td>{_e(d['text'])} "
                    f'<span class="muted">({_e(d["id"])})</span></td>'
                    f"<td><details><summary>{d['count']} students</summary>{links}</details></td></tr>"
                )
            if f["unrecognised"]:
                out.append(
                    f'<tr class="unrecognised"><td class="n">{f["unrecognised"]}</td>'
                    f'<td class="n">{_pct(f["unrecognised"], m)}</td><td>–</td>'
                    "<td>failed checks that no known mistake explains</td><td></td></tr>"
                )
            out.append("</table>")
    out.append("</body></html>\n")
    return "\n".join(out)


# -- the console -------------------------------------------------------------------------------

CONSOLE_LISTED = 50  # lines of each group `drills grade` prints


def _plain(text: str) -> str:
    """``text`` for a terminal: a character that is not printable (an escape code in a folder
    name) is written as its code point instead."""
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in str(text))


def console_summary(body: dict[str, Any], report: str, cap: int = CONSOLE_LISTED) -> list[str]:
    """The lines `drills grade` ends with: every error row and warning of the run, who did not
    hand an assignment in and, with a roster, its gaps, grouped, each naming the student and
    assignment; the first ``cap`` of each group, then where the rest are (``report``)."""
    groups: list[tuple[str, int, list[str]]] = []
    errors = body.get("could_not_grade") or {"count": 0, "listed": []}
    groups.append(
        (
            "could not be graded",
            errors["count"],
            [f"{i['student']} {i['assignment']}: {i['reason']}" for i in errors["listed"]],
        )
    )
    warnings = body.get("warnings") or {"count": 0, "listed": []}
    groups.append(
        (
            "warnings",
            warnings["count"],
            [f"{i['student']} {i['assignment']}: {i['text']}" for i in warnings["listed"]],
        )
    )
    gaps = [
        f"{w['student'] or w['roster']} {a}"
        for a, who in (body.get("did_not_hand_in") or {}).items()
        for w in who
    ]
    groups.append(("did not hand in", len(gaps), gaps))
    roster = body.get("roster")
    if roster is not None:
        groups.append(
            (
                "graded students not in the Canvas roster",
                len(roster["unmatched"]),
                roster["unmatched"],
            )
        )
        groups.append(
            (
                "Canvas roster rows with no grade",
                len(roster["no_grade"]),
                [f"{roster_label(i)} {i['assignment']}: {i['why']}" for i in roster["no_grade"]],
            )
        )
    out = []
    for title, count, lines in groups:
        if not count:
            continue
        out.append(f"{title} ({count}):")
        out += [f"  {_plain(line)}" for line in lines[:cap]]
        if count > min(cap, len(lines)):
            out.append(f"  and {count - min(cap, len(lines))} more, see {_plain(report)}")
    return out
