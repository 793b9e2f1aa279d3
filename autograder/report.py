"""What `drills grade` writes: grades.csv, results.json and one HTML feedback page per submission.

Every file is written atomically (a temporary file in the same folder, then a
rename), so an interrupted run never leaves a half-written gradebook.

- ``grades.csv`` has the columns of ``nbgrader export`` (its CsvExportPlugin),
  one row per student × assignment; a student without a submission for an
  assignment gets nbgrader's row for that case (empty timestamp, score 0).
- ``results.json`` has every case of every function: verdict, diagnosis, time,
  what the learner's program printed (truncated) and what went wrong with it.
- ``feedback/<student>/<assignment>.html`` shows the scores, the failed checks
  and the recognised mistakes; inputs of hidden (generated) cases only with
  ``--show-hidden``.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder import sandbox
from autograder.compare import render_outcome
from autograder.evaluate import (
    CaseResult,
    FunctionResult,
    _render_inputs,
    diagnosis_line,
    kinds_text,
)

CSV_COLUMNS = [
    "assignment",
    "duedate",
    "timestamp",
    "student_id",
    "last_name",
    "first_name",
    "email",
    "raw_score",
    "late_submission_penalty",
    "score",
    "max_score",
]

VERDICTS = {
    sandbox.TIMEOUT: "timeout",
    sandbox.CRASH: "crashed",
    sandbox.NOT_RUN: "not run",
    sandbox.INVALID: "invalid output",
}


@dataclass
class SubmissionResult:
    student: str
    assignment: str
    path: str
    max_score: float
    timestamp: str = ""
    functions: list[FunctionResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None  # the notebook could not be graded at all
    runs: int = 0
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""
    notes: list[str] = field(default_factory=list)
    submitted: bool = True  # False: a row nbgrader export would write for a missing submission

    @property
    def score(self) -> float:
        return round(sum(f.score for f in self.functions), 2)

    def feedback_path(self) -> str:
        return f"feedback/{self.student}/{self.assignment}.html"

    def to_json(self, show_hidden: bool = False) -> dict[str, Any]:
        return {
            "student": self.student,
            "assignment": self.assignment,
            "path": self.path,
            "timestamp": self.timestamp,
            "score": self.score,
            "max_score": self.max_score,
            "error": self.error,
            "warnings": self.warnings,
            "feedback": self.feedback_path() if self.submitted else None,
            "child": {
                "runs": self.runs,
                "seconds": round(self.seconds, 3),
                "stdout": self.stdout,
                "stderr": self.stderr,
                "notes": self.notes,
            },
            "functions": [function_json(f, show_hidden) for f in self.functions],
        }


def verdict(c: CaseResult) -> str:
    if c.passed:
        return "passed"
    return VERDICTS.get(str(c.got.get("raised")), "failed")


def function_json(f: FunctionResult, show_hidden: bool = False) -> dict[str, Any]:
    d = f.to_json(show_hidden)
    for cj, c in zip(d["cases"], f.cases):
        cj["verdict"] = verdict(c)
    return d


# -- atomic files ------------------------------------------------------------------------------


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _num(x: float) -> str:
    return str(float(x))


def grades_csv(results: list[SubmissionResult]) -> str:
    """nbgrader export's CSV: sorted by assignment, then student."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in sorted(results, key=lambda r: (r.assignment, r.student)):
        score = r.score if r.submitted else 0.0
        w.writerow(
            [
                r.assignment,
                "",
                r.timestamp if r.submitted else "",
                r.student,
                "",
                "",
                "",
                _num(score),
                _num(0.0),
                _num(max(0.0, score)),
                _num(r.max_score),
            ]
        )
    return buf.getvalue()


def results_json(
    results: list[SubmissionResult], meta: dict[str, Any], show_hidden: bool = False
) -> str:
    body = dict(meta)
    body["submissions"] = [
        r.to_json(show_hidden) for r in sorted(results, key=lambda r: (r.assignment, r.student))
    ]
    return json.dumps(body, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


# -- feedback ----------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem} h2{font-size:1.1rem;margin-top:1.6rem}
.total{font-size:1.2rem;font-weight:600}
.ok{color:#17692b} .bad{color:#a3161b} .warn{background:#fff4d6;padding:.4rem .6rem;border-radius:4px}
table{border-collapse:collapse;width:100%;font-size:.9rem} td,th{border-bottom:1px solid #ddd;padding:.25rem .4rem;text-align:left;vertical-align:top}
code{font-family:ui-monospace,monospace;font-size:.85rem;white-space:pre-wrap;word-break:break-all}
.diag{background:#eef4ff;padding:.4rem .6rem;border-radius:4px}
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def feedback_html(r: SubmissionResult, show_hidden: bool = False) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(r.assignment)}: feedback for {_e(r.student)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_e(r.assignment)} — feedback for {_e(r.student)}</h1>",
        f'<p class="total">Score: {r.score:g} / {r.max_score:g} points</p>',
    ]
    if r.error:
        out.append(f'<p class="warn">This notebook could not be graded: {_e(r.error)}</p>')
    for w in r.warnings:
        out.append(f'<p class="warn">{_e(w)}</p>')
    for f in r.functions:
        cls = "ok" if f.score >= f.points else "bad"
        out.append(
            f'<h2><code>{_e(f.function)}</code>: <span class="{cls}">{f.score:g} / {f.points:g}</span></h2>'
        )
        if f.error:
            out.append(f"<p>{_e(f.error)}</p>")
            continue
        if not f.attempted:
            out.append(
                "<p>Not attempted yet: it still raises <code>NotImplementedError</code>.</p>"
            )
            continue
        out.append(f"<p>{f.passed} of {len(f.cases)} checks passed.</p>")
        if f.kinds:
            out.append(f"<p>{_e(kinds_text(f.kinds))}</p>")
        for d in f.diagnoses:
            out.append(f'<p class="diag">{_e(diagnosis_line(d))}</p>')
        failed = [c for c in f.cases if not c.passed]
        if failed:
            out.append(
                "<table><tr><th>check</th><th>verdict</th><th>inputs</th><th>expected</th><th>got</th></tr>"
            )
            for c in failed:
                if c.hidden and not show_hidden:
                    inputs = "(hidden: generated for grading)"
                else:
                    inputs = _render_inputs(c.inputs)
                label = c.id + (f" — {c.note}" if c.note else "")
                out.append(
                    f"<tr><td>{_e(label)}</td><td>{_e(verdict(c))}</td><td><code>{_e(inputs)}</code></td>"
                    f"<td><code>{_e(render_outcome(c.expected))}</code></td><td><code>{_e(render_outcome(c.got))}</code></td></tr>"
                )
            out.append("</table>")
    out.append("</body></html>\n")
    return "\n".join(out)


def write_outputs(
    out: Path, results: list[SubmissionResult], meta: dict[str, Any], show_hidden: bool = False
) -> None:
    """Feedback pages first, then results.json, then grades.csv (each atomic)."""
    out.mkdir(parents=True, exist_ok=True)
    for r in results:
        if r.submitted:
            write_atomic(out / r.feedback_path(), feedback_html(r, show_hidden))
    write_atomic(out / "results.json", results_json(results, meta, show_hidden))
    write_atomic(out / "grades.csv", grades_csv(results))
