"""The notebooks' self-check cells: the learner's value and the expected one, compared as the grader compares.

    from autograder.selfcheck import SelfCheck
    check = SelfCheck("01_exact_kl")

    check.value(forward_kl, POLICY, REFERENCE, expected=0.36806365...)
    check.raises(ValueError, forward_kl, [], [])

``check.value`` calls the function, encodes what it returned and the expected value as the
grader does (:mod:`autograder.cases.codec`) and compares them with the function's stated
tolerance (:func:`autograder.cases.compare.same_outcome`): it accepts exactly what a graded
case with that expected value accepts, types included (a list where an array is expected,
a NumPy or 0-d torch number where a float is: the grader compares shapes and values). On a
mismatch the AssertionError shows the call, the learner's value and the expected one, with
as many digits as it takes for them to differ (compare.render_pair), and the tolerance.

Every notebook makes its SelfCheck in its setup cell; making one also starts the "Check my
work" button's warm-up (widgets.warm_up: for a learner in JupyterLab only, never under
nbgrader or nbclient, once per kernel) if the notebook's first code cell has not already
started it, which then has the whole time the learner spends on the notebook to get ready
for the first click.
"""

from __future__ import annotations

from typing import Any


class SelfCheck:
    def __init__(self, assignment: str) -> None:
        self.assignment = assignment
        self._spec = None
        from autograder.widgets import warm_up

        warm_up(assignment)

    def tolerance(self, name: str) -> tuple[float, float]:
        """(rtol, atol): the stated tolerance of the graded function ``name``."""
        from autograder import assignments

        if self._spec is None:
            self._spec = assignments.get(self.assignment)
        f = self._spec.function(name)
        return f.rtol, f.atol

    def value(self, fn, *args, expected: Any, **kwargs) -> Any:
        """``fn(*args, **kwargs)``, checked against ``expected`` by the grader's rule; returns
        what ``fn`` returned (for further checks)."""
        from autograder.cases.codec import EncodeError, encode
        from autograder.cases.compare import render_pair, same_outcome

        name = getattr(fn, "__name__", "the function")
        call = f"{name}({_args(args, kwargs)})"
        got = fn(*args, **kwargs)
        rtol, atol = self.tolerance(name)
        want = {"value": encode(expected)}
        try:
            mine = {"value": encode(got)}
        except (EncodeError, TypeError, ValueError) as e:
            raise AssertionError(
                f"{call} returned a {type(got).__name__} that the grader cannot read ({e}); "
                f"expected {render_pair(want, want)[0]}"
            ) from None
        if not same_outcome(want, mine, rtol, atol):
            shown_expected, shown_got, note = render_pair(want, mine)
            raise AssertionError(
                f"{call}\n  returned {shown_got}"
                + (f" ({type(got).__name__})" if not isinstance(got, (int, float)) else "")
                + f"\n  expected {shown_expected}"
                + (f"\n  ({note})" if note else "")
                + f"\n  a value passes when |yours − expected| ≤ {atol:g} + {rtol:g} · |expected|"
            )
        return got

    def raises(self, error: type[BaseException], fn, *args, **kwargs) -> None:
        """``fn(*args, **kwargs)`` must raise ``error`` (as a graded input check requires)."""
        name = getattr(fn, "__name__", "the function")
        call = f"{name}({_args(args, kwargs)})"
        try:
            got = fn(*args, **kwargs)
        except error:
            return
        except NotImplementedError:
            raise  # not written yet: the stub's own error, as the other checks show it
        except Exception as e:  # noqa: BLE001 (shown to the learner)
            raise AssertionError(
                f"{call} should raise {error.__name__}; it raised {type(e).__name__}: {e}"
            ) from None
        raise AssertionError(f"{call} should raise {error.__name__}; it returned {_short(got)}")


def _short(x: Any, limit: int = 120) -> str:
    text = repr(x).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _args(args: tuple, kwargs: dict) -> str:
    return ", ".join(
        [_short(a, 60) for a in args] + [f"{k}={_short(v, 40)}" for k, v in kwargs.items()]
    )
