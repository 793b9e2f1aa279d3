"""The `drills` command.

drills release [ASSIGNMENT...] [--check]     exercises/ from solutions/ (nbgrader)
drills grade SUBMISSION... --out DIR ...     the sandboxed grader
drills check NOTEBOOK                        one notebook, feedback for a learner
drills cases ASSIGNMENT                      an assignment's cases (kind, split) and known mistakes
"""

from __future__ import annotations

import argparse
import sys

from autograder import notebook


def _release(args: argparse.Namespace) -> int:
    from autograder.release import ReleaseError, release

    try:
        diff = release(args.assignments or None, check=args.check)
    except ReleaseError as e:
        print(str(e), file=sys.stderr)
        return 1
    if args.check:
        if diff:
            print("exercises/ is stale; run `drills release` and commit the result:")
            print(diff.summary())
            return 1
        print("exercises/ is up to date with solutions/")
        return 0
    print(
        "exercises/ regenerated"
        + (
            f" (changes: {len(diff.changed) + len(diff.missing) + len(diff.extra)} files)"
            if diff
            else " (no changes)"
        )
    )
    return 0


def _cases(args: argparse.Namespace) -> int:
    from autograder import assignments
    from autograder.spec import KINDS, grading_line

    spec = assignments.get(args.assignment)
    for f in spec.functions:
        pts = notebook.points(spec.id, f.name)
        counts = ", ".join(f"{k} {len(f.of_kind(k))}" for k in KINDS)
        print(f"{f.name}: {len(f.cases)} cases ({counts}), {len(f.mistakes)} known mistakes")
        print("  " + grading_line(f.name, pts, f.split).replace("**", ""))
        for c in f.cases:
            origin = "generated" if c.hidden else "fixed"
            print(
                f"  case {c.id:<28} {c.kind:<7} {origin:<9} w={c.weight:g} rtol={c.rtol:g} atol={c.atol:g}  {c.note}"
            )
        for m in f.mistakes:
            kind = "validation" if m.validation else "concept"
            print(f"  mistake {m.id:<25} {kind:<10} {m.diagnosis}")
            if m.source:
                print(f"          source: {m.source}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="drills", description="reward-drills: release and grade the notebooks"
    )
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("release", help="regenerate exercises/ from solutions/ with nbgrader")
    r.add_argument("assignments", nargs="*", help="assignment ids (default: all)")
    r.add_argument(
        "--check",
        action="store_true",
        help="only check that exercises/ is up to date (exit 1 if not)",
    )
    r.set_defaults(func=_release)

    c = sub.add_parser("cases", help="list an assignment's cases and known mistakes")
    c.add_argument("assignment")
    c.set_defaults(func=_cases)

    # `grade` and `check` (the sandboxed engine) register themselves here.
    import importlib.util

    if importlib.util.find_spec("autograder.grade_cli") is not None:
        from autograder import grade_cli

        grade_cli.add_subcommands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
