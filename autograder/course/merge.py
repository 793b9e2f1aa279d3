"""`drills merge OUT1 OUT2 ... --out OUT`: one gradebook and one report from shard outputs.

Each ``OUTk`` is the output folder of ``drills grade ... --shard K/N`` (a finished run:
it holds run.json). The merge refuses, with a message that says which folders:

- shards of different runs: another grader, course, secret, settings (limits,
  isolation, ``--show-hidden``) or list of submissions to choose from;
- overlaps: the same shard twice, or the same student and assignment in two shards;
- gaps: a shard K of N that is not given;
- a shard whose results.jsonl does not hold what its run.json lists.

It then streams the shards' results.jsonl in gradebook order (a k-way merge, one
result per shard in memory) into :func:`gradebook.assemble`: grades.csv (byte for byte
what one unsharded run writes), results.jsonl/json, feedback pages, report.html,
report.json and canvas.csv, and writes the merged run.json.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from autograder.course import gradebook, report, run_manifest
from autograder.course.course_report import ClassReport
from autograder.course.report import SubmissionResult


class MergeError(ValueError):
    """Shard outputs that cannot be joined into one gradebook."""


def _check(outs: list[Path], manifests: list[dict[str, Any]]) -> int:
    """Validate the shards; return N."""
    first, where = manifests[0], outs[0]
    for out, m in zip(outs[1:], manifests[1:]):
        for field, what in (
            ("fingerprint", "grader, course or secret"),
            ("settings", "limits, isolation or --show-hidden"),
            ("inputs", "list of submissions"),
        ):
            if m[field] != first[field]:
                raise MergeError(
                    f"{out} and {where} are not shards of one run: their {what} differ "
                    f"({field} in run.json)"
                )
    ns = {m["shard"][1] for m in manifests}
    if len(ns) != 1:
        raise MergeError(
            "the outputs were sharded into different numbers of parts: "
            + ", ".join(f"{o} is {m['shard'][0]}/{m['shard'][1]}" for o, m in zip(outs, manifests))
        )
    n = ns.pop()
    seen: dict[int, Path] = {}
    for out, m in zip(outs, manifests):
        k = m["shard"][0]
        if k in seen:
            raise MergeError(f"shard {k}/{n} is given twice: {seen[k]} and {out}")
        seen[k] = out
    missing = [k for k in range(1, n + 1) if k not in seen]
    if missing:
        raise MergeError(
            "missing shards: "
            + ", ".join(f"{k}/{n}" for k in missing)
            + " (grade them with the same command and --shard K/N, then merge all N)"
        )
    owner: dict[tuple[str, str], Path] = {}
    for out, m in zip(outs, manifests):
        for a, s in m["submissions"]:
            if (a, s) in owner and owner[(a, s)] != out:
                raise MergeError(
                    f"student {s!r}, assignment {a!r} is in two shards: {owner[(a, s)]} and {out}"
                )
            owner[(a, s)] = out
    return n


def _lines(out: Path, expected: list[list[str]]) -> Iterator[tuple[tuple[str, str], dict]]:
    n = 0
    with (out / "results.jsonl").open(encoding="utf-8") as f:
        for line in f:
            item = json.loads(line)
            if n >= len(expected) or [item["assignment"], item["student"]] != expected[n]:
                raise MergeError(f"{out}/results.jsonl does not match its run.json (line {n + 1})")
            n += 1
            yield (item["assignment"], item["student"]), item
    if n != len(expected):
        raise MergeError(f"{out}/results.jsonl is incomplete: {n} of {len(expected)} submissions")


def merge(
    outs: list[Path],
    dest: Path,
    canvas_roster: Path | None = None,
    class_report: ClassReport | None = None,
) -> dict[str, Any]:
    """Join shard outputs ``outs`` into ``dest``; return the merged run.json body.
    ``class_report``: filled with the merged class report (for the console summary)."""
    outs = [Path(o) for o in outs]
    if not outs:
        raise MergeError("no shard outputs given")
    if any(o.resolve() == Path(dest).resolve() for o in outs):
        raise MergeError(f"--out {dest} is one of the shards; merge into a new folder")
    try:
        manifests = [run_manifest.read(o) for o in outs]
    except run_manifest.ManifestError as e:
        raise MergeError(str(e)) from None
    for o in outs:
        if not (o / "results.jsonl").is_file():
            raise MergeError(f"{o} has no results.jsonl")
    _check(outs, manifests)
    first = manifests[0]
    assignments: dict[str, float] = {}
    for m in manifests:
        assignments.update(m["assignments"])
    streams = [_lines(o, m["submissions"]) for o, m in zip(outs, manifests)]
    merged = heapq.merge(*streams, key=lambda kv: kv[0])
    submissions: list[list[str]] = []

    def results() -> Iterator[SubmissionResult]:
        for (a, s), item in merged:
            submissions.append([a, s])
            yield SubmissionResult.from_json(item)

    meta = dict(first.get("meta") or {})
    meta["shard"] = "merged"
    meta["merged_from"] = [str(o) for o in outs]
    show_hidden = bool(first["settings"].get("show_hidden"))
    run = report.run_info(
        str(first["fingerprint"].get("secret", "")),
        str((first.get("meta") or {}).get("secret", "")),
    )
    gradebook.assemble(
        Path(dest), results(), meta, assignments, show_hidden, canvas_roster, run, class_report
    )
    body = {
        "fingerprint": first["fingerprint"],
        "settings": first["settings"],
        "meta": first.get("meta"),
        "shard": [1, 1],
        "merged_from": [str(o) for o in outs],
        "inputs": first["inputs"],
        "assignments": dict(sorted(assignments.items())),
        "submissions": submissions,
        "stats": {
            k: sum(int(m.get("stats", {}).get(k, 0)) for m in manifests)
            for k in ("submissions", "graded", "from_cache", "could_not_grade")
        },
    }
    run_manifest.write(Path(dest), body)
    return body
