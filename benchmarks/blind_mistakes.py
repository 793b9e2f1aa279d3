"""A blind held-out set: wrong implementations written from the released notebooks' text only.

    python benchmarks/blind_mistakes.py [--set blind|blind2|blind3|blind4|blind5|ported] [--list]
        [--json OUT]

Each file in benchmarks/blind/ (and in the second set, benchmarks/blind2/, formula slips only,
written later by another writer under the same rule) is one graded function as a mistaken learner (or an engineer
porting RL-library habits) would write it, by someone who read only exercises/ (not the
solutions, the grader, its case modules, its catalogues or CURRICULUM.md), with its slip in one
sentence in the file's docstring (``notebook:``, ``function:``, ``slip:``). Unlike
benchmarks/heldout_mistakes.py, whose entries wrap the reference's own input checks, these are
whole functions: their input checks and error types are the writer's own, so some slips are
input-check slips.

Each is graded alone in this process (the in-kernel engine, the public default secret), beside
the reference's other functions, and this prints its score, the diagnosis ids of its feedback
(a known mistake, an error shape, a stated property, a gradient line, an input-check line) and,
with ``--list``, the feedback itself. ``judged.json`` beside the files holds, for each file, the
ids that say truly what its slip is, written once by reading each feedback against the slip's
sentence; the summary counts, over the slips that lose points, the first formula diagnosis
that is true (explained), untrue (misdiagnosed) or absent, and the points each carries.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.notebooks import reference  # noqa: E402
from autograder.scoring import evaluate, kernel  # noqa: E402

BLIND = REPO / "benchmarks" / "blind"


def _header(path: Path) -> dict[str, str]:
    """``notebook:``, ``function:`` and ``slip:`` from the file's docstring; where the
    docstring is the slip in prose (the seventh set's), the notebook and the function come
    from the file name (``NN_notebook__function__slip-name.py``)."""
    text = path.read_text(encoding="utf-8")
    doc = text.split('"""')[1]
    out = {}
    for line in doc.strip().splitlines():
        key, _, value = line.partition(":")
        out[key.strip()] = value.strip()
    if "notebook" not in out or "function" not in out:
        notebook, function, _ = path.stem.split("__", 2)
        slip = " ".join(doc.split())
        out = {"notebook": notebook, "function": function, "slip": slip.removeprefix("Slip: ")}
    return out


def grade(path: Path) -> dict:
    head = _header(path)
    a, fn = head["notebook"], head["function"]
    ns = reference.namespace(a, REPO)
    mine: dict = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), mine)
    r = kernel.grade_function(a, fn, mine[fn], namespace=ns, root=REPO)
    return {
        "file": path.name,
        "notebook": a,
        "function": fn,
        "slip": head["slip"],
        "score": round(r.score, 2),
        "points": r.points,
        "diagnoses": [
            {"id": d.id, "kind": d.kind, "points": round(d.points, 2)} for d in r.diagnoses
        ],
        "unexplained": round(r.unexplained, 2),
        "feedback": evaluate.feedback_text(r, max_cases=2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print each one's feedback too")
    ap.add_argument("--json", type=Path, help="write every result here")
    ap.add_argument(
        "--set",
        default="blind",
        help="the set's folder under benchmarks/: blind (the first, graded once before the "
        "property lines and once after) or blind2 (written later, graded once after the "
        "property and localisation lines) or blind3 (written later still, graded once after "
        "the part, flag and sign lines) or blind4, blind5, blind6 (graded once after the probes) or "
        "blind7 (graded once after the exchange and precision lines) or blind8, blind9, "
        "blind10, blind11 (each graded once after the fixes the one before it showed) or "
        "ported (functions as OpenRLHF and TRL compute them, graded once after the probes); "
        "each set's INDEX.md holds its once-graded figures",
    )
    args = ap.parse_args(argv)
    folder = REPO / "benchmarks" / args.set
    judged_path = folder / "judged.json"
    judged = json.loads(judged_path.read_text()) if judged_path.exists() else {}
    results = []
    lost = explained_pts = untrue_pts = where_pts = 0.0
    counts = {"explained": 0, "misdiagnosed": 0, "unexplained": 0, "full marks": 0}
    for path in sorted(folder.glob("*.py")):
        r = grade(path)
        results.append(r)
        true = set(judged.get(r["file"], []))
        formula = [
            d
            for d in r["diagnoses"]
            if d["kind"] not in ("validation", "where") and d["id"] != evaluate.GRADIENT_WITH_VALUES
        ]
        loss = r["points"] - r["score"]
        if loss < 0.1 * r["points"]:
            verdict = "full marks" if loss < 1e-9 else "small loss"
        elif not formula:
            verdict = "unexplained"
        elif formula[0]["id"] in true:
            verdict = "explained"
        else:
            verdict = "misdiagnosed" if judged else "not judged"
        if verdict in counts:
            counts[verdict] += 1
        if loss >= 0.1 * r["points"]:
            lost += loss
            explained_pts += sum(
                d["points"] for d in r["diagnoses"] if d["id"] in true and d["kind"] != "where"
            )
            untrue_pts += sum(d["points"] for d in formula if d["id"] not in true and judged)
            # a line saying where the failed checks fall names no cause: counted apart (true of
            # the outcomes by construction; tests/test_where_lines.py checks it)
            where_pts += sum(d["points"] for d in r["diagnoses"] if d["kind"] == "where")
        ids = ", ".join(d["id"] for d in r["diagnoses"]) or "-"
        print(f"{verdict:12s} {r['score']:5.2f}/{r['points']:g}  {r['file']}  -> {ids}")
        if args.list:
            print("    slip: " + r["slip"])
            print("    " + r["feedback"].replace("\n", "\n    "))
    print()
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    if lost:
        print(
            f"points lost {lost:.2f}: carried by a true line {explained_pts:.2f} "
            f"= {explained_pts / lost:.0%}, localised {where_pts:.2f}, together "
            f"{(explained_pts + where_pts) / lost:.0%}; by an untrue one {untrue_pts:.2f}"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
