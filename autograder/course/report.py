"""What `drills grade` writes: grades.csv, results.json(l) and one HTML feedback page per submission.

Every file is written atomically (a temporary file in the same folder, then a
rename), so an interrupted run never leaves a half-written gradebook.

- ``grades.csv`` has the columns of ``nbgrader export`` (its CsvExportPlugin),
  one row per student × assignment; a student without a submission for an
  assignment gets nbgrader's row for that case (empty timestamp, score 0).
- ``results.jsonl``: one line per submission, every case of every function:
  verdict, expected and computed values, diagnosis, time, what the learner's
  program printed (truncated). ``results.json`` holds the same objects in one
  document (``{...run facts..., "submissions": [...]}``) for older readers.
  Both are for the instructor: inputs of generated cases only with ``--show-hidden``.
- ``feedback/<student>/<assignment>.html`` shows the scores, the failed checks
  and the recognised mistakes; a generated case shows pass/fail and its note
  only (its inputs and values could be replayed), unless ``--show-hidden``.

:func:`autograder.course.gradebook.assemble` writes all of them (and the class report and the
Canvas CSV) from a stream of results in gradebook order, holding one result at a time.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import functools
import html
import importlib.metadata
import io
import json
import os
import tempfile
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from autograder.engine import sandbox
from autograder.scoring.evaluate import (
    CaseResult,
    FunctionResult,
    _render_inputs,
    diagnosis_line,
    kinds_text,
    not_attempted_line,
    not_graded_line,
    render_values,
    shows_values,
    unexplained_line,
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
        return feedback_path(self.student, self.assignment)

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

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SubmissionResult:
        """The inverse of :meth:`to_json` (a cached or merged result back into an object)."""
        child = d.get("child") or {}
        return cls(
            student=d["student"],
            assignment=d["assignment"],
            path=d.get("path", ""),
            max_score=float(d["max_score"]),
            timestamp=d.get("timestamp", ""),
            functions=[function_from_json(f) for f in d.get("functions", [])],
            warnings=list(d.get("warnings", [])),
            error=d.get("error"),
            runs=int(child.get("runs", 0)),
            seconds=float(child.get("seconds", 0.0)),
            stdout=child.get("stdout", ""),
            stderr=child.get("stderr", ""),
            notes=list(child.get("notes", [])),
        )


def feedback_path(student: str, assignment: str) -> str:
    """Where a submission's feedback page is, relative to the output folder."""
    return f"feedback/{student}/{assignment}.html"


# -- the run a page belongs to -------------------------------------------------------------------


def grader_version() -> str:
    """The installed reward-drills package's version ("unknown" when it is not installed)."""
    try:
        return importlib.metadata.version("reward-drills")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def run_info(
    secret_fingerprint: str, secret_kind: str, when: datetime.datetime | None = None
) -> dict[str, str]:
    """What the report and every feedback page say about the run that wrote them: when, which
    grader version, and the secret's fingerprint (the salted digest run.json records under
    ``fingerprint.secret``, never the secret)."""
    when = when or datetime.datetime.now().astimezone()
    return {
        "graded_at": when.isoformat(timespec="seconds"),
        "version": grader_version(),
        "secret_fingerprint": secret_fingerprint,
        "secret": secret_kind,
    }


def run_line(run: dict[str, str] | None) -> str:
    """One line of text for :func:`run_info`'s facts ("" without them)."""
    if not run:
        return ""
    kind = f" ({run['secret']})" if run.get("secret") else ""
    return (
        f"Graded {run.get('graded_at', '?')} by reward-drills {run.get('version', '?')}; "
        f"secret fingerprint {run.get('secret_fingerprint', '?')}{kind}."
    )


def verdict(c: CaseResult) -> str:
    if c.passed:
        return "passed"
    return VERDICTS.get(str(c.got.get("raised")), "failed")


def function_json(f: FunctionResult, show_hidden: bool = False) -> dict[str, Any]:
    d = f.to_json(show_hidden)
    for cj, c in zip(d["cases"], f.cases):
        cj["verdict"] = verdict(c)
    return d


def _from_json(cls, d: dict[str, Any]):
    """A dataclass from its ``asdict`` JSON: keys it does not know (e.g. ``verdict``) are
    ignored, and a field typed ``list[SomeDataclass]`` (cases, diagnoses...) is rebuilt."""
    body = {}
    for name, item in _list_fields(cls):
        if name not in d:
            continue
        value = d[name]
        if item is not None and isinstance(value, list):
            value = [_from_json(item, v) if isinstance(v, dict) else v for v in value]
        body[name] = value
    return cls(**body)


@functools.cache
def _list_fields(cls) -> tuple[tuple[str, Any], ...]:
    """(field name, the dataclass of its items when typed ``list[SomeDataclass]``, else None),
    once per class: resolving the annotations is most of the cost of rebuilding a result."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in fields(cls):
        hint = hints.get(f.name)
        args = typing.get_args(hint) if typing.get_origin(hint) is list else ()
        out.append((f.name, args[0] if args and is_dataclass(args[0]) else None))
    return tuple(out)


def function_from_json(d: dict[str, Any]) -> FunctionResult:
    """A FunctionResult (its cases and any other list of dataclasses included) from its JSON."""
    return _from_json(FunctionResult, d)


# -- atomic files ------------------------------------------------------------------------------


def private_dir(path: Path) -> None:
    """``path`` as a folder only its owner can enter (0700, whatever the umask): created so,
    or narrowed if it exists. Only for folders the grader owns (never the output folder a
    user made, which is created 0700 only when it does not exist)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o700)


@contextlib.contextmanager
def atomic_writer(path: Path, private: bool = False) -> Iterator[io.TextIOBase]:
    """A text file that appears at ``path`` complete or not at all (temp file, fsync, rename).

    ``private``: the file holds hidden values (generated inputs, expected and computed
    values): it is 0600 whatever the umask, and its folder, if this creates it, 0700 (a
    folder of the grader's own is narrowed by the caller: :func:`private_dir`); else 0644."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700 if private else 0o777)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600 if private else 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_atomic(path: Path, text: str, private: bool = False) -> None:
    with atomic_writer(path, private) as f:
        f.write(text)


def remove_stale_temp_files(out: Path) -> int:
    """Delete the ``.<name>.<random>.tmp`` files a killed writer left under ``out``."""
    n = 0
    for p in Path(out).rglob(".*.tmp"):
        if p.is_file() and not p.is_symlink():
            p.unlink(missing_ok=True)
            n += 1
    return n


# -- the gradebook -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One row of grades.csv: what is kept of a result once its files are written."""

    assignment: str
    student: str
    timestamp: str
    score: float
    max_score: float
    submitted: bool = True
    graded: bool = True  # False: the notebook could not be graded (the result's error says why)

    @staticmethod
    def of(r: SubmissionResult) -> Row:
        return Row(
            r.assignment, r.student, r.timestamp, r.score, r.max_score, r.submitted, r.error is None
        )

    @property
    def has_grade(self) -> bool:
        """A score to export: submitted and graded. A missing or ungradable notebook has
        none, and exports as an empty cell, never as a 0 that reads like a real zero."""
        return self.submitted and self.graded


def missing_rows(rows: Iterable[Row], assignments: dict[str, float]) -> list[Row]:
    """nbgrader export writes a row for every student × assignment: those not submitted."""
    rows = list(rows)
    students = sorted({r.student for r in rows})
    have = {(r.student, r.assignment) for r in rows}
    return [
        Row(a, s, "", 0.0, assignments[a], submitted=False)
        for a in sorted(assignments)
        for s in students
        if (s, a) not in have
    ]


def _num(x: float) -> str:
    return str(float(x))


def gradebook_csv(rows: Iterable[Row]) -> str:
    """nbgrader export's CSV: sorted by assignment, then student. A row without a grade (no
    submission, or a notebook that could not be graded: results.json and the feedback page
    say why) has empty score cells, where nbgrader's export writes 0."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in sorted(rows, key=lambda r: (r.assignment, r.student)):
        if r.has_grade:
            scores = [_num(r.score), _num(0.0), _num(max(0.0, r.score))]
        else:
            scores = ["", "", ""]
        w.writerow(
            [
                r.assignment,
                "",
                r.timestamp if r.submitted else "",
                r.student,
                "",
                "",
                "",
                *scores,
                _num(r.max_score),
            ]
        )
    return buf.getvalue()


def grades_csv(results: list[SubmissionResult]) -> str:
    """nbgrader export's CSV of a list of results (missing-submission rows included as given)."""
    return gradebook_csv(Row.of(r) for r in results)


def results_json(
    results: list[SubmissionResult], meta: dict[str, Any], show_hidden: bool = False
) -> str:
    """results.json of a list of results (the text :class:`ResultsDocument` streams)."""
    buf = io.StringIO()
    doc = ResultsDocument(buf, meta)
    for r in sorted(results, key=lambda r: (r.assignment, r.student)):
        doc.add(r.to_json(show_hidden))
    doc.close()
    return buf.getvalue()


class ResultsDocument:
    """results.json written one submission at a time: the run's facts indented, then
    ``"submissions"`` with one submission per line (one JSON document either way)."""

    def __init__(self, f: io.TextIOBase, meta: dict[str, Any]) -> None:
        head = json.dumps(
            {**meta, "submissions": []}, indent=1, ensure_ascii=False, allow_nan=False
        )
        assert head.endswith("[]\n}")
        f.write(head[: -len("[]\n}")] + "[")
        self.f, self.n = f, 0

    def add(self, item: dict[str, Any], text: str | None = None) -> None:
        """Add one submission; ``text``: ``item`` already dumped as this would dump it
        (results.jsonl's line), so a large result is encoded once for both files."""
        if text is None:
            text = json.dumps(item, ensure_ascii=False, allow_nan=False)
        self.f.write(("\n  " if self.n == 0 else ",\n  ") + text)
        self.n += 1

    def close(self) -> None:
        self.f.write("\n ]\n}\n" if self.n else "]\n}\n")


# -- feedback ----------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem} h2{font-size:1.1rem;margin-top:1.6rem}
.total{font-size:1.2rem;font-weight:600}
.ok{color:#17692b} .bad{color:#a3161b} .warn{background:#fff4d6;padding:.4rem .6rem;border-radius:4px}
table{border-collapse:collapse;width:100%;font-size:.9rem} td,th{border-bottom:1px solid #ddd;padding:.25rem .4rem;text-align:left;vertical-align:top}
code{font-family:ui-monospace,monospace;font-size:.85rem;white-space:pre-wrap;word-break:break-all}
.diag{background:#eef4ff;padding:.4rem .6rem;border-radius:4px}
pre.msg{font-family:ui-monospace,monospace;font-size:.85rem;white-space:pre-wrap;word-break:break-word}
footer.run{margin-top:2rem;color:#666;font-size:.8rem}
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _message(text: str, cls: str = "") -> str:
    """A message of the grader: a paragraph, or when it spans lines (a syntax error's line and
    the caret under it) a block that keeps its lines and spaces, so the caret stays put."""
    if "\n" not in text:
        return f'<p class="{cls}">{_e(text)}</p>' if cls else f"<p>{_e(text)}</p>"
    return f'<pre class="{("msg " + cls).strip()}">{_e(text)}</pre>'


# What a learner can do about a notebook that could not be graded, by what its reason says
# (first match wins); the reason itself is always shown beside it.
_ADVICE = [
    (
        ("all name student",),
        "Two folders were handed in under one student id, so neither was graded. Your "
        "instructor has to sort this out: tell them, quoting this page.",
    ),
    (
        ("grader failed", "grader could not"),
        "This is a failure of the grader, not a verdict on your work. Tell your instructor, "
        "quoting this page: they can grade it again once it is fixed.",
    ),
    (
        ("which assignment", "unknown assignment"),
        "Hand in the notebook you were given for this assignment, under its own file name and "
        "with its graded cells kept.",
    ),
    (
        ("symbolic link", "links are not followed"),
        "Hand in the notebook file itself (not a link or shortcut to it).",
    ),
    (
        ("json", "not a notebook", "not a valid notebook", "cannot read", "was not read"),
        "The file that was handed in could not be read as a notebook. Check that it opens in "
        "Jupyter; if it does not, download your notebook again from where you worked on it "
        "(File > Download, as .ipynb) and hand that file in.",
    ),
]
_ADVICE_DEFAULT = (
    "Fix what the reason above names and hand the notebook in again; if it is not clear what "
    "to change, ask your instructor, quoting this page."
)


def advice(reason: str) -> str:
    """What to do about a notebook that could not be graded for ``reason`` (generic where the
    reason says nothing more specific)."""
    low = reason.lower()
    for needles, text in _ADVICE:
        if any(n in low for n in needles):
            return text
    return _ADVICE_DEFAULT


def feedback_html(
    r: SubmissionResult, show_hidden: bool = False, run: dict[str, str] | None = None
) -> str:
    """The learner's page. ``run``: :func:`run_info` of the run, shown at the foot. A notebook
    that could not be graded (``r.error``) shows no score (none is exported: grades.csv and
    canvas.csv leave its cell empty), only why and what to do."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(r.assignment)}: feedback for {_e(r.student)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_e(r.assignment)} — feedback for {_e(r.student)}</h1>",
    ]
    if r.error:
        out += [
            '<p class="total bad">This notebook could not be graded, so it has no score '
            "(no grade was recorded for it: it is not a zero).</p>",
            f'<p class="warn">Why: {_e(r.error)}</p>',
            f"<p>What to do: {_e(advice(r.error))}</p>",
        ]
    else:
        out.append(f'<p class="total">Score: {r.score:g} / {r.max_score:g} points</p>')
    for w in r.warnings:
        out.append(_message(w, "warn"))
    for f in r.functions if not r.error else ():
        cls = "ok" if f.score >= f.points else "bad"
        out.append(
            f'<h2><code>{_e(f.function)}</code>: <span class="{cls}">{f.score:g} / {f.points:g}</span></h2>'
        )
        # every point lost has its cost line, in evaluate.feedback_text's words
        if f.error:
            out.append(_message(f.error))
            out.append(f'<p class="diag">{_e(not_graded_line(f))}</p>')
            continue
        if not f.attempted:
            out.append(f'<p class="diag">{_e(not_attempted_line(f))}</p>')
            continue
        out.append(f"<p>{f.passed} of {len(f.cases)} checks passed.</p>")
        if f.kinds:
            out.append(f"<p>{_e(kinds_text(f.kinds))}</p>")
        if getattr(f, "note", ""):
            out.append(_message(f.note))
        for d in f.diagnoses:
            out.append(f'<p class="diag">{_e(diagnosis_line(d, show_hidden))}</p>')
        if getattr(f, "unexplained_checks", 0):
            line = unexplained_line(f.unexplained_checks, f.unexplained)
            out.append(f'<p class="diag">{_e(line)}</p>')
        failed = [c for c in f.cases if not c.passed]
        if failed:
            out.append(
                "<table><tr><th>check</th><th>verdict</th><th>inputs</th><th>expected</th><th>got</th></tr>"
            )
            for c in failed:
                if shows_values(c, show_hidden):
                    inputs = _render_inputs(c.inputs)
                    expected, got, _ = render_values(c, show_hidden)
                else:
                    inputs = "(hidden: generated for grading)"
                    expected = got = "(hidden)"
                label = c.id + (f" — {c.note}" if c.note else "")
                out.append(
                    f"<tr><td>{_e(label)}</td><td>{_e(verdict(c))}</td><td><code>{_e(inputs)}</code></td>"
                    f"<td><code>{_e(expected)}</code></td><td><code>{_e(got)}</code></td></tr>"
                )
            out.append("</table>")
    if run:
        out.append(f'<footer class="run">{_e(run_line(run))}</footer>')
    out.append("</body></html>\n")
    return "\n".join(out)
