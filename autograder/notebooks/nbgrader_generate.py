"""``python -m autograder.notebooks.nbgrader_generate A [B ...]``, run in a scratch course.

nbgrader's ``generate_assignment`` for several assignments in one process. The command
line takes one assignment per call, and each call spends most of its time importing
nbgrader (about 5 s of CPU on 2 cores) before a conversion of about 2 s; this driver
imports it once and converts every assignment with nbgrader's own API (the converter
the command line runs, with the course's ``nbgrader_config.py`` from the working
directory). It prints one JSON line per assignment and exits 1 after the first that
fails, with nbgrader's log in the line.

Run only by autograder.notebooks.release, which owns the scratch course.
"""

from __future__ import annotations

import json
import sys


def main(assignments: list[str]) -> int:
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=".").load_config()
    api = NbGraderAPI(config=config)
    for a in assignments:
        result = api.generate_assignment(a, force=True)
        ok = bool(result.get("success"))
        print(json.dumps({"assignment": a, "success": ok, "log": "" if ok else _log(result)}))
        if not ok:
            return 1
    return 0


def _log(result: dict) -> str:
    return "\n".join(str(result.get(k) or "") for k in ("error", "log")).strip()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
