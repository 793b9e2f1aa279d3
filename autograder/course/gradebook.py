"""Every output of a run, assembled from a stream of results: the feedback pages,
results.jsonl and results.json, the class report, canvas.csv, and grades.csv last.

``drills grade`` and ``drills merge`` both end here. What each file holds is written in
:mod:`autograder.course.report` (the gradebook, results and feedback pages),
:mod:`autograder.course.course_report` and :mod:`autograder.course.exports.canvas`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from autograder.course import course_report, report
from autograder.course.exports import canvas


def assemble(
    out: Path,
    results: Iterable[report.SubmissionResult],
    meta: dict[str, Any],
    assignments: dict[str, float],
    show_hidden: bool = False,
    canvas_roster: Path | None = None,
    run: dict[str, str] | None = None,
    class_report: course_report.ClassReport | None = None,
) -> list[report.Row]:
    """Write every output of a run from ``results`` (submitted ones, in gradebook order).

    ``assignments`` maps each graded assignment to its maximum score (for the rows of
    students who did not submit it). One result is held at a time; what is kept is a
    :class:`report.Row` per submission and the class report's counters. Order of writing:
    feedback pages, results.jsonl and results.json, report.html/report.json, canvas.csv,
    and grades.csv last (each atomic): a grades.csv is never newer than what it sums up.
    ``run``: :func:`report.run_info` of the run, shown on the report and every feedback page.
    ``class_report``: the ClassReport to fill (a caller reads its lists afterwards, e.g. for
    the console summary); a new one when None. Returns the gradebook's rows.
    """
    # results.json(l) hold every case's values (and --show-hidden pages the generated inputs):
    # 0600 files; the output folder 0700 when this run creates it.
    out.parent.mkdir(parents=True, exist_ok=True)
    out.mkdir(exist_ok=True, mode=0o700)
    rows: list[report.Row] = []
    stats = class_report if class_report is not None else course_report.ClassReport()
    stats.run = run
    with (
        report.atomic_writer(out / "results.jsonl", private=True) as lines,
        report.atomic_writer(out / "results.json", private=True) as whole,
    ):
        doc = report.ResultsDocument(whole, meta)
        if show_hidden:
            report.private_dir(out / "feedback")
        for r in results:
            if show_hidden:
                report.private_dir((out / r.feedback_path()).parent)
            report.write_atomic(
                out / r.feedback_path(), report.feedback_html(r, show_hidden, run), show_hidden
            )
            item = r.to_json(show_hidden)
            text = json.dumps(item, ensure_ascii=False, allow_nan=False)
            lines.write(text + "\n")
            doc.add(item, text)  # the same bytes in results.json: encoded once
            stats.add(r)
            rows.append(report.Row.of(r))
        doc.close()
    missing = report.missing_rows(rows, assignments)
    rows += missing
    roster = canvas.read_roster(canvas_roster)
    canvas_text = canvas.canvas_csv(rows, roster)
    stats.set_gaps(
        [(m.assignment, m.student) for m in missing],
        None if roster is None else roster.unmatched,
        None if roster is None else roster.no_grade,
    )
    stats.write(out)
    report.write_atomic(out / "canvas.csv", canvas_text)
    report.write_atomic(out / "grades.csv", report.gradebook_csv(rows))
    return rows
