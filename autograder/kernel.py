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

from autograder.evaluate import feedback_text, grade_function
from autograder.seeds import PUBLIC_DEFAULT_SECRET, autograde_student, course_secret

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
