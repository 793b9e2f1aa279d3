"""The `drills` command.

drills release [ASSIGNMENT...] [--check]     exercises/ from solutions/ (nbgrader)
drills grade SUBMISSION... --out DIR ...     the sandboxed grader
drills check NOTEBOOK                        one notebook, feedback for a learner
drills cases ASSIGNMENT                      list an assignment's cases and known mistakes
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

    spec = assignments.get(args.assignment)
    for f in spec.functions:
        pts = notebook.points(spec.id, f.name)
        print(f"{f.name} ({pts:g} points): {len(f.cases)} cases, {len(f.mistakes)} known mistakes")
        for c in f.cases:
            kind = "generated" if c.hidden else "fixed"
            print(
                f"  case {c.id:<28} {kind:<9} w={c.weight:g} rtol={c.rtol:g} atol={c.atol:g}  {c.note}"
            )
        for m in f.mistakes:
            print(f"  mistake {m.id:<25} {m.diagnosis}")
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
