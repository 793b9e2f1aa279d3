"""The call inside each nbgrader hidden-test cell.

    ### BEGIN HIDDEN TESTS
    import autograder; autograder.grade_cell("01_exact_kl", "log_ratios", log_ratios)
    ### END HIDDEN TESTS

It runs the cases against the learner's function, prints the points per kind of
case (the formula, edge cases, input checks), the diagnoses (a recognised mistake,
or an error shape) and what failed to stdout (never stderr: nbgrader scores a cell
with any stderr output 0), and returns the points earned as a float in [0, points],
which nbgrader reads from the cell's execute_result as partial credit.

Under ``nbgrader autograde`` the kernel runs in ``autograded/<student>/<assignment>/``:
the student id is read from there and seeds the generated cases, exactly as
``drills grade`` seeds them from ``submitted/<student>/``, so both engines grade
each student on the same inputs. Values of generated cases are not printed
(they could be replayed on a regrade).

This shares the learner's kernel (nbgrader's trust model): code in the
notebook can patch it. `drills grade` runs the same cases in a sandbox.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from autograder import assignments
from autograder.cases import seeds
from autograder.cases.seeds import PUBLIC_DEFAULT_SECRET, autograde_student, course_secret
from autograder.notebooks import notebook
from autograder.scoring import served, stubs
from autograder.scoring.evaluate import FunctionResult, feedback_text, materialize, run_cases, score
from autograder.scoring.memo import LazyMistakes, probes_with_reference, reference_outcomes

# Has a hidden-test cell of this kernel called the learner's code on generated inputs? The
# kernel keeps the learner's globals from one cell to the next, so what a later cell's fixed
# cases return may carry them (their values are then not printed).
_GENERATED_SEEN = [False]


def grade_cell(assignment: str, function: str, fn, points: float | None = None) -> float:
    """Grade ``fn`` against the cases of ``assignment``/``function``; return the points earned."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            student = autograde_student(assignment)
            # with the public default secret anyone can draw the generated inputs: no taint
            seen = _GENERATED_SEEN[0] and course_secret() != PUBLIC_DEFAULT_SECRET
            result = grade_function(
                assignment, function, fn, points=points, student=student, after_generated=seen
            )
            _GENERATED_SEEN[0] = _GENERATED_SEEN[0] or any(c.hidden for c in result.cases)
        except Exception as e:  # noqa: BLE001 (never a traceback in a graded cell)
            print(f"{function}: could not be graded ({type(e).__name__}: {e})")
            return 0.0
    print(feedback_text(result))
    return float(result.score)


def grade_function(
    assignment: str,
    name: str,
    fn,
    namespace: dict | None = None,
    points: float | None = None,
    secret: str | None = None,
    student: str | None = None,
    root: Path | None = None,
    after_generated: bool = False,
) -> FunctionResult:
    """Grade one function object in this process (the in-kernel engine).

    ``after_generated``: learner code in this process was already called on generated
    inputs (an earlier hidden-test cell): see CaseResult.after_generated."""
    fspec = assignments.get(assignment).function(name)
    pts = float(points) if points is not None else notebook.points(assignment, name, root)
    inputs = materialize(assignment, fspec, seeds.course_secret(secret), student)
    expected = reference_outcomes(assignment, fspec, inputs, root)
    ns = namespace if namespace is not None else getattr(fn, "__globals__", {})
    keep, charged = _served_here(assignment, name, fn, ns)
    got, times = run_cases(fn, served.restrict(inputs, keep), ns)

    def probes() -> list[dict]:
        # the learner's results on inputs changed in one stated way, after every graded call
        # and only when a check failed (score asks for them then): they cost no point
        changed = probes_with_reference(
            assignment, fspec, seeds.course_secret(secret), student, inputs, root
        )
        # served as the checks were: a probe compares two of the same code's results
        theirs, _ = run_cases(fn, served.restrict(changed, keep), ns)
        return [dict(p, got=g) for p, g in zip(changed, theirs)]

    result = score(
        assignment,
        fspec,
        pts,
        inputs,
        expected,
        got,
        times,
        LazyMistakes(assignment, name, inputs, root),
        after_generated,
        stub_note=_stub_note(assignment, name, fn, ns, got, keep),
        probes=probes,
    )
    result.note = " ".join(t for t in (result.note, charged) if t)
    return result


def _stub_note(assignment: str, name: str, fn, ns: dict, got: list[dict], keep: set[str]) -> str:
    """The helpers ``fn`` calls that are still stubs (stubs.stub_text), read only when some
    case raised NotImplementedError; the callees served by value (scoring.served) are not
    followed: they answer as the reference does."""
    if not any(g.get("raised") == "NotImplementedError" for g in got):
        return ""
    helpers = stubs.live_stub_callees(fn, ns, keep)
    return stubs.stub_text(name, helpers) if helpers else ""


def _served_here(assignment: str, name: str, fn, ns: dict) -> tuple[set[str], str]:
    """The callees ``fn``'s cases serve by value in this kernel, and where a slip in a helper
    is charged (the same rule as submission.build_program for `drills grade`): every graded
    callee; a helper that is missing or still a stub here, if the function of the cell the
    notebook gives it in calls it (or is missing itself): that function is charged, once,
    and the others that call it are served the reference and told so."""
    try:
        graded = assignments.get(assignment).names
    except KeyError:
        return set(), ""
    owners = served.owner_cells(assignment)
    candidates = set(served.served_names(assignment, name))
    provided = served.provided_names(assignment)  # graded in another notebook: always served
    keep = {n for n in candidates if n in graded or n in provided}
    lines = []
    for helper in owners:
        if helper in graded or helper in provided:
            continue
        obj = ns.get(helper)
        if obj is None:
            why = "is not defined"
        elif stubs.live_is_stub(obj):
            why = "still raises NotImplementedError"
        else:
            continue

        def calls(f: str, helper: str = helper) -> bool:
            g = fn if f == name else ns.get(f)
            skip = set(served.served_names(assignment, f)) - {helper}
            return callable(g) and helper in stubs.live_names_reached(g, ns, skip)

        owner = next((g for g in graded if owners.get(g) == owners[helper]), None)
        if owner is not None and callable(ns.get(owner) if owner != name else fn):
            if not calls(owner):
                continue  # its function does without it: charged to every caller
        else:
            owner = None
        if helper in candidates:
            keep.add(helper)
        others = [g for g in graded if helper in served.served_names(assignment, g) and calls(g)]
        if name == owner or name in others:
            lines.append(served.charged_text(helper, why, owner, others))
    return keep, " ".join(lines)
