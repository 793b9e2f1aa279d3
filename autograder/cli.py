"""The `drills` command.

drills release [ASSIGNMENT...] [--check]     exercises/ from solutions/ (nbgrader)
drills release --course OUT [ASSIGNMENT...]  the course form: notebooks, wheel, values; no answers
drills grade SUBMISSION... --out DIR ...     the sandboxed grader (resumable, --shard K/N)
drills merge OUT... --out DIR                one gradebook and report from shard outputs
drills check NOTEBOOK                        one notebook, feedback for a learner
drills cases ASSIGNMENT [--scores]           an assignment's cases (kind, split) and known mistakes;
                                             --scores: each mistake's score, for the CHANGELOG
drills new-function ASSIGNMENT NAME --points P   scaffold a graded function (cells, cases, rows)
drills new-notebook ID --title T             scaffold and register a new notebook (no function yet)
drills author-check ASSIGNMENT [--fast]      every check an author runs, for that notebook only
drills gradescope-bundle --out ZIP           a Gradescope autograder running `drills grade`
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.notebooks import notebook


def _answer_keys(assignments: list[str] | None) -> list:
    """The answer keys the released notebooks hold (course.answer_key.scan), each printed."""
    from autograder.course import answer_key

    root = notebook.course_root()
    released = [
        notebook.release_path(a, root)
        for a in (assignments or notebook.available_assignments(root))
        if notebook.release_path(a, root).is_file()
    ]
    found = answer_key.scan(released)
    for f in found:
        print(f"answer key: {f}", file=sys.stderr)
    return found


def _course_release(args: argparse.Namespace) -> int:
    from autograder.course import course_release
    from autograder.notebooks.release import ReleaseError

    try:
        built = course_release.build(Path(args.course), args.assignments or None)
    except (course_release.CourseReleaseError, ReleaseError, OSError) as e:
        print(f"drills release --course: {e}", file=sys.stderr)
        return 1
    for f in built.findings:
        print(f"answer key: {f}", file=sys.stderr)
    if built.findings:
        print(
            f"drills release --course: {built.out} holds an answer key (above): do not hand it out",
            file=sys.stderr,
        )
        return 1
    print(
        f"wrote the course form of {', '.join(built.assignments)} to {built.out}: "
        f"exercises/, dist/{built.wheel.name}, COURSE.md; the answer-key scan (the exercises "
        "and the package, by name and by behaviour) found nothing"
    )
    return 0


def _release(args: argparse.Namespace) -> int:
    from autograder.notebooks.release import ReleaseError, release

    if args.course:
        return _course_release(args)

    try:
        diff = release(args.assignments or None, check=args.check)
    except ReleaseError as e:
        print(str(e), file=sys.stderr)
        return 1
    keys = _answer_keys(args.assignments or None)
    if args.check:
        if diff:
            print("exercises/ is stale; run `drills release` and commit the result:")
            print(diff.summary())
            return 1
        if keys:
            return 1
        print("exercises/ is up to date with solutions/, and holds no answer key")
        return 0
    if keys:
        return 1
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
    from autograder.cases.spec import KINDS, grading_line

    spec = assignments.get(args.assignment)
    if getattr(args, "scores", False):
        return _scores(spec, check=getattr(args, "check", False))
    if getattr(args, "grading_lines", False):
        from autograder.scaffold import ScaffoldError, sync_grading_lines

        try:
            changed = sync_grading_lines(args.assignment)
        except ScaffoldError as e:
            print(f"drills cases: {e}", file=sys.stderr)
            return 2
        print(
            f"rewrote the grading line of {', '.join(changed)} in "
            f"{notebook.source_path(args.assignment)}; then: drills release {args.assignment}"
            if changed
            else "every grading line matches the case module and the points"
        )
        return 0
    for f in spec.functions:
        pts = notebook.points(spec.id, f.name)
        counts = ", ".join(
            f"{k} {len(f.of_kind(k))}" for k in KINDS if k != "gradient" or f.of_kind(k)
        )
        print(f"{f.name}: {len(f.cases)} cases ({counts}), {len(f.mistakes)} known mistakes")
        print("  " + grading_line(f.name, pts, f.split, (f.rtol, f.atol)).replace("**", ""))
        for c in f.cases:
            origin = "generated" if c.hidden else "fixed"
            print(
                f"  case {c.id:<28} {c.kind:<7} {origin:<9} w={c.weight:g} rtol={c.rtol:g} atol={c.atol:g}  {c.note}"
                + (f"  [rule: {c.rule}]" if c.rule else "")
            )
            if c.anchored:
                print(f"          anchor: {c.expected!r}  ({c.anchor})")
        for m in f.mistakes:
            kind = "validation" if m.validation else "concept"
            print(f"  mistake {m.id:<25} {kind:<10} {m.diagnosis}")
            if m.source:
                print(f"          source: {m.source}")
    return 0


def mistake_scores(assignment: str, fspec) -> tuple[dict[str, float], float]:
    """Each catalogued mistake's score and the score of the reference without its input checks
    (the no-checks submission), with the public default secret, as the CHANGELOG quotes them."""
    from autograder.cases import seeds
    from autograder.notebooks import reference, source
    from autograder.scoring import kernel

    secret = seeds.PUBLIC_DEFAULT_SECRET
    ns = reference.namespace(assignment)
    scores = {
        m.id: kernel.grade_function(
            assignment, fspec.name, m.build(ns), namespace=ns, secret=secret
        ).score
        for m in fspec.mistakes
    }
    fn, unchecked_ns = source.without_checks(assignment, fspec.name)
    no_checks = kernel.grade_function(
        assignment, fspec.name, fn, namespace=unchecked_ns, secret=secret
    ).score
    return scores, no_checks


def _scores(spec, check: bool = False) -> int:
    from autograder.assignments import catalogue

    rows = list(catalogue.functions(only=[spec.id]))
    changelog = notebook.course_root() / "CHANGELOG.md"
    recorded = (
        catalogue.recorded_scores(changelog.read_text(encoding="utf-8"))
        if changelog.is_file()
        else {}
    )
    problems: list[str] = []
    print("Known mistakes rows of CHANGELOG.md:")
    for a, f, _ in rows:
        print(catalogue.mistake_row(a, f))
    print()
    print("Scores (public default secret, two decimals), for the CHANGELOG entry:")
    print("| assignment | function | points | mistakes (score) | no checks |")
    print("|---|---|---|---|---|")
    for a, f, pts in rows:
        scores, no_checks = mistake_scores(a, f)
        listed = ", ".join(f"`{m}` {s:g}" for m, s in scores.items())
        print(f"| {a} | `{f.name}` | {pts:g} | {listed} | {no_checks:g} |")
        problems += catalogue.score_problems(a, f, pts, scores, no_checks, recorded)
    unrecorded = [f.name for a, f, _ in rows if (a, f.name) not in recorded]
    if problems:
        print()
        print("\n".join(problems), file=sys.stderr)
    if unrecorded:
        print(
            f"\nno score row in CHANGELOG.md yet for {', '.join(unrecorded)}: its scores cannot be "
            "compared until an entry quotes them"
        )
    return 1 if problems and check else 0


def _new_function(args: argparse.Namespace) -> int:
    from autograder.scaffold import ScaffoldError, scaffold

    mistakes = [m.strip() for m in args.mistakes.split(",") if m.strip()] if args.mistakes else None
    try:
        checklist = scaffold(args.assignment, args.name, args.points, args.params, mistakes)
    except (ScaffoldError, KeyError, OSError) as e:
        print(f"drills new-function: {e}", file=sys.stderr)
        return 2
    print("\n".join(checklist))
    return 0


def _new_notebook(args: argparse.Namespace) -> int:
    from autograder.scaffold import ScaffoldError, new_notebook

    try:
        checklist = new_notebook(args.assignment, args.title)
    except (ScaffoldError, OSError) as e:
        print(f"drills new-notebook: {e}", file=sys.stderr)
        return 2
    print("\n".join(checklist))
    return 0


def _author_check(args: argparse.Namespace) -> int:
    from autograder import author_check as ac

    only = ac.FAST if args.fast else ac.STAGES
    if args.stages:
        only = tuple(s.strip() for s in args.stages.split(",") if s.strip())
        bad = [s for s in only if s not in ac.STAGES]
        if bad:
            print(f"drills author-check: unknown stages {bad}; known: {', '.join(ac.STAGES)}")
            return 2
    try:
        outcomes = ac.run(
            args.assignment, only=only, all_mistakes=args.all_mistakes, fail_fast=args.fail_fast
        )
    except ac.AuthorCheckError as e:
        print(f"drills author-check: {e}", file=sys.stderr)
        return 2
    print("\n".join(ac.summary(args.assignment, outcomes)))
    return 0 if all(o.ok for o in outcomes) else 1


def _merge(args: argparse.Namespace) -> int:
    from autograder.course.course_report import ClassReport, console_summary
    from autograder.course.exports.canvas import RosterError
    from autograder.course.merge import MergeError, merge

    class_report = ClassReport()
    try:
        body = merge(
            [Path(o) for o in args.outputs],
            Path(args.out),
            Path(args.canvas_roster) if args.canvas_roster else None,
            class_report,
        )
    except (MergeError, RosterError, OSError) as e:
        print(f"drills merge: {e}", file=sys.stderr)
        return 2
    for line in console_summary(class_report.to_json(), str(Path(args.out) / "report.html")):
        print(line, file=sys.stderr)
    print(
        f"merged {len(args.outputs)} shards ({len(body['submissions'])} submissions) into "
        f"{Path(args.out) / 'grades.csv'} and {Path(args.out) / 'report.html'}"
    )
    return 0


def _gradescope_bundle(args: argparse.Namespace) -> int:
    from autograder.course.exports import gradescope

    try:
        path = gradescope.bundle(
            Path(args.out),
            assignment=args.assignment,
            secret_file=Path(args.secret_file) if args.secret_file else None,
            visibility=args.visibility,
            timeout=args.timeout,
        )
    except (ValueError, OSError) as e:
        print(f"drills gradescope-bundle: {e}", file=sys.stderr)
        return 2
    print(f"wrote {path}: upload it as the autograder of a Gradescope programming assignment")
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
    r.add_argument(
        "--course",
        metavar="OUT",
        help="build the course form a graded class receives into OUT: the released notebooks, "
        "a wheel without the answer key (tiny_model without its reference module, for "
        "05-07) and the values Check my work grades against; fails if the answer-key scan "
        "finds anything",
    )
    r.set_defaults(func=_release)

    c = sub.add_parser("cases", help="list an assignment's cases and known mistakes")
    c.add_argument("assignment")
    c.add_argument(
        "--scores",
        action="store_true",
        help="each mistake's score and the no-checks score, in the CHANGELOG's format",
    )
    c.add_argument(
        "--check",
        action="store_true",
        help="with --scores: exit 1 when a catalogued mistake scores full marks or a score "
        "differs from the CHANGELOG's last score row of its function",
    )
    c.add_argument(
        "--grading-lines",
        action="store_true",
        help="rewrite the grading line under each function in the source notebook as the case "
        "module has it (after a change of points, split, rtol or atol)",
    )
    c.set_defaults(func=_cases)

    n = sub.add_parser(
        "new-function",
        help="scaffold a graded function: notebook cells, case module entry, table and CHANGELOG rows",
    )
    n.add_argument("assignment")
    n.add_argument("name", help="the function's name")
    n.add_argument("--points", type=float, required=True, help="its points (the test cell's)")
    n.add_argument(
        "--params",
        default="x",
        help='its parameters as in its def, defaults allowed: "values, mask, eps=1e-8"',
    )
    n.add_argument(
        "--mistakes", help="ids of the mistakes to catalogue, comma-separated (default: one)"
    )
    n.set_defaults(func=_new_function)

    nn = sub.add_parser(
        "new-notebook",
        help="create and register a notebook: skeleton, case module, ASSIGNMENTS and MODULES, "
        "README row, CHANGELOG entry",
    )
    nn.add_argument("assignment", help="its id: two digits, '_', a lower-case name (08_gae)")
    nn.add_argument("--title", required=True, help="its title, as the README's table shows it")
    nn.set_defaults(func=_new_notebook)

    a = sub.add_parser(
        "author-check",
        help="lint, release check, reference, contract, scores, mutation, notebook and nbgrader "
        "checks of one notebook (what an author runs after a change)",
    )
    a.add_argument("assignment", help="the notebook: its id or its number (02)")
    a.add_argument(
        "--fast",
        action="store_true",
        help="lint, release, reference, contract and scores only (no mutation, no notebook run, "
        "no nbgrader)",
    )
    a.add_argument("--stages", help="comma-separated stages to run (default: all)")
    a.add_argument(
        "--all-mistakes",
        action="store_true",
        help="nbgrader's round trip with every catalogued mistake, not only the first ones",
    )
    a.add_argument("--fail-fast", action="store_true", help="stop at the first failing stage")
    a.set_defaults(func=_author_check)

    m = sub.add_parser("merge", help="join `drills grade --shard K/N` outputs into one gradebook")
    m.add_argument("outputs", nargs="+", help="the --out folders of the N shards")
    m.add_argument("--out", required=True, help="folder for the merged outputs")
    m.add_argument(
        "--canvas-roster", metavar="EXPORT.csv", help="a Canvas gradebook export (see grade)"
    )
    m.set_defaults(func=_merge)

    b = sub.add_parser(
        "gradescope-bundle", help="write a Gradescope autograder zip that runs `drills grade`"
    )
    b.add_argument("--out", required=True, help="the zip to write, e.g. autograder.zip")
    b.add_argument("--assignment", help="grade every submission as this assignment")
    b.add_argument("--secret-file", help="course secret to put in the bundle (recommended)")
    b.add_argument(
        "--visibility",
        default="visible",
        choices=["visible", "hidden", "after_due_date", "after_published"],
        help="Gradescope visibility of the score and of each function's test (default visible)",
    )
    b.add_argument("--timeout", type=float, default=30.0, help="seconds per cell or call")
    b.set_defaults(func=_gradescope_bundle)

    # `grade` and `check` (the sandboxed engine) register themselves here.
    import importlib.util

    if importlib.util.find_spec("autograder.course.grade_cli") is not None:
        from autograder.course import grade_cli

        grade_cli.add_subcommands(sub)
    return p


# What the course form (an installed course wheel: notebooks.course_values) can run: a learner's
# own check and its check server. Everything else needs the reference solutions or the case
# modules, which only the repository (the full form) holds.
COURSE_FORM_COMMANDS = ("check", "warm")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from autograder.notebooks import course_values

    if args.command not in COURSE_FORM_COMMANDS and course_values.active():
        print(
            f"drills {args.command}: this is the course form of reward-drills (what students "
            "of a graded class receive): it holds the public draw's values for Check my work, "
            "not the reference solutions or cases this command needs. Run it on the "
            "instructor's machine, in the repository (the full form)",
            file=sys.stderr,
        )
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
