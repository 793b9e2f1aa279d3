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
"""

from __future__ import annotations

import html
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.course.report import SubmissionResult, write_atomic
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

    def add(self, f: FunctionResult) -> None:
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

    def ranked(self) -> list[dict[str, Any]]:
        items = sorted(self.diagnoses.items(), key=lambda kv: (-kv[1], kv[0].kind, kv[0].id))
        return [{"kind": d.kind, "id": d.id, "text": d.text, "count": n} for d, n in items]


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


def _why(r: SubmissionResult) -> list[str]:
    return [r.student, (r.error or "")[:300]]


class ClassReport:
    """Counters filled one result at a time (:meth:`add`), written by :meth:`write`."""

    def __init__(self) -> None:
        self.assignments: dict[str, AssignmentStats] = {}
        self.unidentified = 0  # notebooks that could not be tied to an assignment
        self.unidentified_why: list[list[str]] = []  # [student, why] of the first listed

    def add(self, r: SubmissionResult) -> None:
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
            a.functions.setdefault(f.function, FunctionStats(f.points)).add(f)

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "assignments": {},
            "unidentified": self.unidentified,
            "unidentified_why": self.unidentified_why,
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

    def write(self, out: Path) -> None:
        body = self.to_json()
        write_atomic(out / "report.json", json.dumps(body, indent=1, ensure_ascii=False) + "\n")
        write_atomic(out / "report.html", report_html(body))


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


def report_html(body: dict[str, Any]) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>Class report</title>',
        f"<style>{_CSS}</style></head><body>",
        "<h1>Class report</h1>",
    ]
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
                "<table><tr><th>students</th><th>share of submissions</th><th>kind</th><th>diagnosis</th></tr>"
            )
            for d in f["diagnoses"]:
                out.append(
                    f'<tr class="diagnosis" data-id="{_e(d["id"])}" data-kind="{_e(d["kind"])}">'
                    f'<td class="n">{d["count"]}</td><td class="n">{_pct(d["count"], m)}</td>'
                    f"<td>{_e(d['kind'])}</td><td>{_e(d['text'])} "
                    f'<span class="muted">({_e(d["id"])})</span></td></tr>'
                )
            if f["unrecognised"]:
                out.append(
                    f'<tr class="unrecognised"><td class="n">{f["unrecognised"]}</td>'
                    f'<td class="n">{_pct(f["unrecognised"], m)}</td><td>–</td>'
                    "<td>failed checks that no known mistake explains</td></tr>"
                )
            out.append("</table>")
    out.append("</body></html>\n")
    return "\n".join(out)
