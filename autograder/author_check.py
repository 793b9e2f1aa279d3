"""`drills author-check ASSIGNMENT`: everything an author runs after changing one notebook.

    drills author-check 02            # or the full id, 02_clipped_estimators; `make check A=02`

runs, for that notebook only, one stage after the other, with a progress line per stage and a
summary of what passed:

    lint        ruff check and ruff format --check on its case module and its tests/test_aNN file
                (what `make lint` checks of them)
    layout      the rules of a notebook (autograder/notebooks/layout.py: title, story, setup cell,
                a figure, a widget, the closing sections, Check my work, no outputs)
    release     `drills release ID --check`: exercises/ is what the source notebook generates
    reference   the reference against evidence it did not produce: the docstring's examples, the
                defaults it states, the properties of autograder/assignments/properties.py on
                every case's inputs, the anchors (tests/test_reference.py, tests/test_anchors.py);
                every function is checked, and each failing one is named with why
    contract    the grading contract and the sync tests (test_cases, test_rules, test_field_maths,
                test_recognition, test_callees, the notebook's own tests/test_aNN file, the
                CHANGELOG tables, no scaffold placeholder left)
    scores      `drills cases ID --scores --check`: no catalogued mistake at full marks, no score
                moved since the CHANGELOG's last score row of its function
    mutation    every mutant of its references killed or listed as equivalent
    notebook    the solution runs top to bottom at full marks, the exercise fails only with
                NotImplementedError (nbclient)
    nbgrader    nbgrader's round trip of this notebook (the solution, the stub, the first mistake
                of every function; --all-mistakes: every mistake) agrees with `drills grade`

Every pytest stage runs with ``DRILLS_ONLY=ID`` (tests/conftest.py), so nothing runs for another
notebook. When the reference stage fails, the summary says so first: a wrong reference makes
the contract, scores and mutation stages fail in ways that blame the cases or the mistakes.
The stages need the checkout's ``tests/`` and the dev tools (`pip install -e ".[dev]"`).
Written to a file or a pipe, a failing stage's output has its colour codes removed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder import assignments
from autograder.notebooks import notebook

STAGES = (
    "lint",
    "layout",
    "release",
    "reference",
    "contract",
    "scores",
    "mutation",
    "notebook",
    "nbgrader",
)
FAST = STAGES[: STAGES.index("mutation")]  # --fast: the stages before any notebook executes


class AuthorCheckError(ValueError):
    """The check cannot start (unknown notebook, no tests/ folder); the message says why."""


def resolve(assignment: str) -> str:
    """The full id of ``assignment``, given whole or by its number ("02", "2")."""
    if assignment in notebook.ASSIGNMENTS:
        return assignment
    found = [a for a in notebook.ASSIGNMENTS if a.split("_")[0] == assignment.zfill(2)]
    if len(found) != 1:
        raise AuthorCheckError(
            f"unknown notebook {assignment!r}; known: {', '.join(notebook.ASSIGNMENTS)}"
        )
    return found[0]


@dataclass
class Stage:
    name: str
    what: str
    commands: list[list[str]]
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Outcome:
    stage: str
    ok: bool
    seconds: float
    tail: str  # the end of the failing command's output ("" when it passed)
    output: str = ""  # the failing command's whole output, read for patterns (summary)
    # the reference stage: {function: [why it failed]} of every function whose reference fails
    failing: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def stages(
    assignment: str, root: Path, all_mistakes: bool = False, only: tuple[str, ...] = STAGES
) -> list[Stage]:
    py = sys.executable
    pytest = [py, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:xdist"]
    pytest += ["-o", "addopts="]  # no --durations table: the summary is this command's
    number = assignment.split("_")[0]
    module = root / "autograder" / "assignments" / f"{assignments.MODULES[assignment]}.py"
    own_test = root / "tests" / f"test_a{number}_{assignment.split('_', 1)[1]}.py"
    lint_files = [str(p) for p in (module, own_test) if p.is_file()]
    ruff = [py, "-m", "ruff"]
    k = ["-k", assignment]
    every = [c for c in pytest if c != "-x"]  # reference and contract: every failure
    contract = [
        "tests/test_cases.py",
        "tests/test_rules.py",
        "tests/test_field_maths.py",
        "tests/test_recognition.py",
        "tests/test_callees.py",
    ]
    out = [
        Stage(
            "lint",
            f"ruff on {', '.join(Path(f).name for f in lint_files)}",
            [[*ruff, "check", *lint_files], [*ruff, "format", "--check", *lint_files]],
        ),
        Stage(
            "layout",
            "the rules of a notebook (docs/authoring.md)",
            [[*pytest, "tests/test_notebook_layout.py"]],
        ),
        Stage(
            "release",
            "exercises/ is what the source notebook generates",
            [[py, "-m", "autograder.cli", "release", assignment, "--check"]],
        ),
        Stage(  # every function, not only the first failing one: a shared helper breaks several
            "reference",
            "docstring examples, stated defaults, properties, anchors",
            [[*every, "-rf", "tests/test_reference.py", "tests/test_anchors.py"]],
            {"COLUMNS": "400"},  # the short summary's FAILED lines keep their reason
        ),
        Stage(
            "contract",
            "the grading contract and the sync tests",
            [
                [*every, *contract, *k],
                [
                    *pytest,
                    *([str(own_test)] if own_test.is_file() else []),
                    "tests/test_changelog.py",
                    "tests/test_scaffold.py::test_no_scaffold_placeholder_is_left",
                ],
            ],
        ),
        Stage(
            "scores",
            "no mistake at full marks; scores as the CHANGELOG last recorded them",
            [[py, "-m", "autograder.cli", "cases", assignment, "--scores", "--check"]],
        ),
        Stage(
            "mutation", "every mutant killed or listed", [[*pytest, "tests/test_mutation.py", *k]]
        ),
        Stage(
            "notebook",
            "the solution and the exercise run top to bottom",
            [[*pytest, "tests/test_notebooks.py"]],
            {"DRILLS_NOTEBOOKS_NBCLIENT": "1"},
        ),
        Stage(
            "nbgrader",
            "nbgrader and drills grade agree"
            + (" on every mistake" if all_mistakes else " (solution, stub, first mistakes)"),
            [[*pytest, "tests/test_nbgrader_agreement.py"]],
            {"DRILLS_AGREEMENT_ALL": "1"} if all_mistakes else {},
        ),
    ]
    return [s for s in out if s.name in only]


ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")  # colour and other escapes


def strip_ansi(text: str) -> str:
    """``text`` without terminal escape sequences (the colours of a kernel's traceback)."""
    return ANSI.sub("", text)


def _run(cmd: list[str], env: dict[str, str], root: Path) -> tuple[int, str]:
    p = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    return p.returncode, (p.stdout + p.stderr)


def failing_functions(output: str) -> dict[str, list[tuple[str, str]]]:
    """{function: [(check, reason)]} of the FAILED lines of a pytest run (``-rf``) whose tests
    are parametrised by (assignment, function, ...): the check is the test's name in words, the
    reason the first line of its message. A failing test of no function is listed under its
    own name."""
    found: dict[str, list[tuple[str, str]]] = {}
    for test, params, reason in re.findall(
        r"^FAILED tests/[\w/]+\.py::(\w+)(?:\[([^\]]*)\])?(?: - (.*))?$", output, re.M
    ):
        parts = params.split("-")
        function = parts[1] if len(parts) >= 2 else test
        check = re.sub(r"^test_(reference_)?", "", test).replace("_", " ")
        reason = re.sub(r"^\w*(Error|Exception): ", "", (reason or "").strip())
        reason = re.sub(
            r"^the reference may be wrong: \S+ `\w+` \(the solution cell of [^)]*\) ", "", reason
        ).rstrip(":")
        if (check, reason) not in found.setdefault(function, []):
            found[function].append((check, reason))
    return found


def run(
    assignment: str,
    root: Path | None = None,
    only: tuple[str, ...] = STAGES,
    all_mistakes: bool = False,
    fail_fast: bool = False,
    say=print,
    colour: bool | None = None,
) -> list[Outcome]:
    """Run the stages for ``assignment``; print a progress line per stage; return the outcomes.

    A failing stage's output keeps its colour codes only with ``colour`` (by default: when
    stdout is a terminal); in a log file or a pipe they would be raw ``\\x1b[...m`` text."""
    if colour is None:
        colour = sys.stdout.isatty()
    root = root or notebook.course_root()
    assignment = resolve(assignment)
    if not (root / "tests" / "conftest.py").is_file():
        raise AuthorCheckError(f"{root / 'tests'} is missing: run it in a checkout of the course")
    env = dict(os.environ, DRILLS_ONLY=assignment, DRILLS_COURSE_ROOT=str(root))
    env.pop("DRILLS_SECRET", None)
    env.pop("DRILLS_SECRET_FILE", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    todo = stages(assignment, root, all_mistakes, only)
    outcomes: list[Outcome] = []
    for i, st in enumerate(todo, 1):
        say(f"[{i}/{len(todo)}] {st.name:<9} {st.what} …", flush=True)
        t0 = time.monotonic()
        ok, tail, output = True, "", ""
        for cmd in st.commands:
            rc, text = _run(cmd, {**env, **st.env}, root)
            if rc != 0:
                output = strip_ansi(text)
                ok, tail = False, (text if colour else output)[-4000:]
                break
        failing = failing_functions(output) if st.name == "reference" and not ok else {}
        outcomes.append(Outcome(st.name, ok, time.monotonic() - t0, tail, output, failing))
        say(f"      {'passed' if ok else 'FAILED'} in {outcomes[-1].seconds:.0f} s", flush=True)
        if not ok:
            say(_indent(tail))
            for line in _failing_lines(failing):
                say(line)
            if fail_fast:
                break
    return outcomes


def mistakes_failing_no_case(output: str) -> dict[str, list[str]]:
    """{function: [mistake ids]} of the contract tests' "mistake m fails no case" failures."""
    found: dict[str, list[str]] = {}
    for function, mistake in re.findall(r"(\w+): mistake ([\w.\-]+) fails no case", output):
        if mistake not in found.setdefault(function, []):
            found[function].append(mistake)
    return found


def _failing_lines(failing: dict[str, list[tuple[str, str]]]) -> list[str]:
    """Every function of a failing reference stage, each with why (the log's tail may have
    lost the first ones)."""
    if not failing:
        return []
    lines = [f"      the reference fails for {len(failing)}: {', '.join(failing)}"]
    for function, reasons in failing.items():
        lines += [
            f"        {function}: {check}" + (f": {reason[:240]}" if reason else "")
            for check, reason in reasons
        ]
    return lines


def _indent(text: str) -> str:
    return "\n".join("      | " + line for line in text.rstrip().splitlines()[-40:])


def summary(assignment: str, outcomes: list[Outcome]) -> list[str]:
    total = sum(o.seconds for o in outcomes)
    passed = [o.stage for o in outcomes if o.ok]
    failed = [o.stage for o in outcomes if not o.ok]
    lines = [
        f"{resolve(assignment)}: {len(passed)} of {len(outcomes)} stages passed in {total:.0f} s"
        + (f" ({', '.join(passed)})" if passed else ""),
    ]
    if failed:
        lines.append(f"failed: {', '.join(failed)}")
    if "reference" in failed:
        lines.append(
            "the reference may be wrong: it fails evidence it did not produce (its docstring's "
            "examples or defaults, a stated property, an anchor). Fix the reference first: a "
            "wrong reference also makes the contract, scores and mutation stages blame the cases "
            "and the mistakes."
        )
        for o in outcomes:
            if o.stage == "reference" and o.failing:
                lines.append(
                    f"the reference fails for {len(o.failing)}: "
                    + "; ".join(
                        f"{f} ({', '.join(check for check, _ in reasons)})"
                        for f, reasons in o.failing.items()
                    )
                )
    blamed = mistakes_failing_no_case(
        "".join(o.output for o in outcomes if o.stage == "contract" and not o.ok)
    )
    for function, ids in blamed.items():
        if len(ids) >= 2 and "reference" not in failed:
            lines.append(
                f"{len(ids)} mistakes of {function} fail no case at once ({', '.join(ids)}): "
                "more likely the reference changed into them than that each needs a new case. "
                "The reference may be wrong: compare it with its description, its docstring's "
                "example and the anchors before adding cases."
            )
    skipped = [s for s in STAGES if s not in {o.stage for o in outcomes}]
    if skipped:
        lines.append(f"not run: {', '.join(skipped)}")
    return lines
