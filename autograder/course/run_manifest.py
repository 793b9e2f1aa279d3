"""run.json: what one `drills grade` run (or one shard of it) was, beside its outputs.

    {"format": "drills-run/1",
     "fingerprint": {"grader": ..., "course": ..., "secret": ...},   digests, never the secret
     "settings": {"limits": ..., "isolation": ..., "show_hidden": ...},
     "shard": [K, N], "inputs": digest of every submission the shards choose from,
     "assignments": {assignment: max_score},     assignments graded (rows for non-submitters)
     "submissions": [[assignment, student], ...],  this run's, in gradebook order
     "stats": {...}, "timing": {...}, "parent_peak_rss_mb": ...,
     "warm_workers": {"warm_jobs": n, "cold_jobs": n, "unavailable": why or null, ...} or null}

`drills merge` reads it to refuse shards that do not belong together (different
grader, course, secret, settings or submission list), overlaps and gaps. It is
written last, after grades.csv, so a folder with a run.json holds a finished run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from autograder.course.report import write_atomic

FORMAT = "drills-run/1"
NAME = "run.json"


class ManifestError(ValueError):
    """A folder holds no finished run, or a run.json that cannot be read."""


def write(out: Path, body: dict[str, Any]) -> None:
    write_atomic(Path(out) / NAME, json.dumps({"format": FORMAT, **body}, indent=1) + "\n")


def read(out: Path) -> dict[str, Any]:
    p = Path(out) / NAME
    try:
        body = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(
            f"{out} holds no finished `drills grade` run (no {NAME}); run or resume it first"
        ) from None
    except (OSError, ValueError) as e:
        raise ManifestError(f"cannot read {p}: {e}") from None
    needed = ("fingerprint", "settings", "shard", "inputs", "assignments", "submissions")
    if (
        not isinstance(body, dict)
        or body.get("format") != FORMAT
        or any(k not in body for k in needed)
    ):
        raise ManifestError(f"{p} is not a {FORMAT} manifest")
    return body
