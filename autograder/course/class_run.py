"""A class run, `drills grade`'s loop: discovery, the results cache, grading, the gradebook.

    discover   engine/layout.py: the submissions under the paths, one layout rule (a row for
               every student folder, an error row for whatever breaks it)
    shard      shards.select: the part of them this run grades (``--shard K/N``)
    cache      a result already in OUT/.drills-cache for the same submission is reused
    grade      the Grader (grade_cli.py) grades the rest, as they come, in sandboxed children
    store      each result rendered once and stored at once (atomic): a killed run resumes
    assemble   grades.csv, results.json(l), feedback pages, report.html and canvas.csv from the
               cache in gradebook order (gradebook.assemble), then run.json

``grade_course`` takes the Grader as an argument (it does not import grade_cli, which uses it).
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import resource
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.cases import codec
from autograder.course import course_report, gradebook, report, results_cache, run_manifest, shards
from autograder.course.report import SubmissionResult
from autograder.engine import layout, submission


@dataclass
class RunStats:
    """What one `drills grade` run did (printed, and recorded in run.json)."""

    submissions: int = 0
    graded: int = 0
    from_cache: int = 0
    corrupt_cache_entries: int = 0
    could_not_grade: int = 0
    timing: dict[str, float] = field(default_factory=dict)
    # every submission the paths named that cannot be graded as found (a link, a folder that
    # breaks the layout, two folders that become one student id, ...): printed by the command
    not_graded: list[str] = field(default_factory=list)
    # the run's errors, warnings and gaps, grouped, as `drills grade` ends by printing them
    # (course_report.console_summary)
    summary: list[str] = field(default_factory=list)


def clean_result(res: SubmissionResult) -> SubmissionResult:
    """The text of a result that came from the submission's path or notebook rather than the
    sandbox (a file name that is not UTF-8, a grade_id quoted in a warning), made writable."""
    res.path = codec.clean_text(res.path)
    res.timestamp = codec.clean_text(res.timestamp)
    res.warnings = [codec.clean_text(w) for w in res.warnings]
    res.error = None if res.error is None else codec.clean_text(res.error)
    for f in res.functions:
        f.error = None if f.error is None else codec.clean_text(f.error)
    return res


def describe(e: BaseException) -> str:
    """``TypeError: message`` for a grader failure, whatever the exception holds."""
    try:
        text = str(e)
    except Exception:  # noqa: BLE001 (an exception whose __str__ fails)
        text = "<no message>"
    return codec.clean_text(f"{type(e).__name__}: {text}")[:1000]


def progress(total: int):
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=total, unit="notebook", desc="grading", file=sys.stderr)


# Collections of the cyclic garbage collector while a class is graded: the first generation is
# examined after this many new container objects instead of Python's 700. Grading allocates
# mostly short-lived, acyclic containers (parsed JSON, outcomes, rendered rows), and with the
# default every few hundred of them set off a scan: on 100 submissions the process used 9.7 s
# of CPU with the default and 8.5 s with this (docs/speed.md). Cycles are still collected,
# a few times per submission.
GC_THRESHOLD = 10_000


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """The collector's first threshold raised to GC_THRESHOLD for the run, then put back."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], GC_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@_fewer_collections()
def grade_course(
    paths: list[str | Path],
    out: Path,
    grader: Any,
    assignment: str | None = None,
    jobs: int = 1,
    shard: tuple[int, int] = (1, 1),
    force: bool = False,
    show_hidden: bool = False,
    canvas_roster: Path | None = None,
    progress: bool = False,
) -> RunStats:
    """Grade the submissions under ``paths`` into ``out``, resuming from its results cache.

    Writes grades.csv, results.jsonl, results.json, feedback/, report.html, report.json,
    canvas.csv and run.json (see gradebook.assemble and run_manifest). Raises
    results_cache.CacheBusy when another run holds ``out``, ValueError when no notebook
    was found.
    """
    t0 = time.monotonic()
    started = datetime.datetime.now().astimezone()
    empty: list[str] = []
    everything = layout.discover(paths, assignment, notes=empty)
    if not everything:
        raise ValueError("no notebooks found in " + " ".join(str(p) for p in paths))
    k, n = shard
    subs = shards.select(everything, k, n)
    limits = grader.meta(show_hidden)["limits"]
    fp = results_cache.fingerprint(grader.root, grader.secret, limits, grader.run_mode())
    cache = results_cache.ResultsCache(out, fp)
    cache.lock()
    try:
        stats = RunStats(submissions=len(subs))
        stats.not_graded = [f"{s.student}: {s.error}" for s in everything if s.error] + empty
        # (assignment, student, order) -> key of a stored entry, or the result itself when
        # it cannot be stored (a path that does not exist): what the gradebook is built from.
        index: list[tuple[tuple[str, str, int], str | SubmissionResult]] = []
        assignments_seen: dict[str, float] = {}
        todo: list[tuple[int, submission.Submission, str | None]] = []
        for order, sub in enumerate(subs):
            try:
                key = cache.key(sub)
            except Exception:  # noqa: BLE001 (e.g. a file name that is not UTF-8): graded, not cached
                key = None
            entry = None if force or key is None else cache.load(key)
            if entry is None:
                todo.append((order, sub, key))
                continue
            r = entry["result"]
            index.append(((r["assignment"], r["student"], order), key))
            if entry["max_score_known"]:
                assignments_seen[r["assignment"]] = float(r["max_score"])
            stats.from_cache += 1
        keys = {id(sub): (order, key) for order, sub, key in todo}
        bar = progress(len(subs)) if progress else None
        if bar:
            bar.update(stats.from_cache)
        for sub, res in grader.results([s for _, s, _ in todo], jobs, bar):
            order, key = keys[id(sub)]
            known = res.assignment in grader._prepared
            res = _stored(cache, key, res, known, show_hidden)
            index.append(((res.assignment, res.student, order), key if key else res))
            if known:
                assignments_seen[res.assignment] = res.max_score
            stats.graded += 1
        if bar:
            bar.close()
        stats.corrupt_cache_entries = cache.corrupt
        index.sort(key=lambda item: item[0])

        def stream() -> Iterator[SubmissionResult]:
            for _, ref in index:
                if isinstance(ref, SubmissionResult):
                    r = ref
                else:
                    entry = cache.load(ref)
                    if entry is None:
                        raise RuntimeError(f"the results cache entry {ref} vanished during the run")
                    r = SubmissionResult.from_json(entry["result"])
                stats.could_not_grade += bool(r.error)
                yield r

        meta = grader.meta(show_hidden)
        meta["shard"] = [k, n]
        t1 = time.monotonic()
        run = report.run_info(fp.secret, str(meta.get("secret", "")), started)
        class_report = course_report.ClassReport()
        gradebook.assemble(
            out,
            stream(),
            meta,
            assignments_seen,
            show_hidden,
            canvas_roster=canvas_roster,
            run=run,
            class_report=class_report,
        )
        stats.summary = course_report.console_summary(
            class_report.to_json(), str(out / "report.html")
        )
        stats.timing = dict(grader.timing, assemble_s=time.monotonic() - t1)
        stats.timing["total_s"] = time.monotonic() - t0
        run_manifest.write(
            out,
            {
                "fingerprint": fp.to_json(),
                "meta": meta,
                "settings": {
                    "limits": limits,
                    "isolation": grader.isolation.mode,
                    "show_hidden": show_hidden,
                    "per_student": grader.per_student,
                },
                "shard": [k, n],
                "inputs": shards.inputs_digest(everything),
                "assignments": dict(sorted(assignments_seen.items())),
                "submissions": [[a, st] for (a, st, _), _ in index],
                "stats": {
                    "submissions": stats.submissions,
                    "graded": stats.graded,
                    "from_cache": stats.from_cache,
                    "corrupt_cache_entries": stats.corrupt_cache_entries,
                    "could_not_grade": stats.could_not_grade,
                },
                # sandboxed runs in warm workers and in fresh interpreters, and why warm
                # workers could not be used (None: nothing was graded, or warm was off)
                "warm_workers": dict(grader.pool_stats) or None,
                "timing": {k2: round(v, 3) for k2, v in stats.timing.items()},
                "parent_peak_rss_mb": round(peak_rss_mb(), 1),
            },
        )
        return stats
    finally:
        cache.unlock()


def _stored(
    cache: results_cache.ResultsCache,
    key: str | None,
    res: SubmissionResult,
    known: bool,
    show_hidden: bool,
) -> SubmissionResult:
    """``res`` rendered once as the report will render it (feedback page, gradebook row) and
    stored in the results cache; a result that cannot be (a grader bug on odd data, never
    expected) is replaced by this submission's error row, so the report can write every row.
    A full disk or an unwritable folder (OSError) is the run's problem and is raised."""
    try:
        report.feedback_html(res, show_hidden).encode("utf-8")
        report.gradebook_csv([report.Row.of(res)]).encode("utf-8")
        if key is not None:
            cache.store(key, res, known)
        return res
    except OSError:
        raise
    except Exception as e:  # noqa: BLE001 (one notebook must not stop the class run)
        why = describe(e)
    failed = SubmissionResult(
        res.student,
        res.assignment,
        res.path,
        res.max_score,
        timestamp=res.timestamp,
        warnings=res.warnings,
        error=f"the grader could not write this submission's results ({why})",
    )
    failed = clean_result(failed)
    if key is not None:
        cache.store(key, failed, known)
    return failed


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB (Linux reports KiB)."""
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024.0 if sys.platform != "darwin" else kib / 1024.0 / 1024.0
