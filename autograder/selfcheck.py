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

A self-check runs the kernel's functions; the grade reads the saved file. Where the two differ
for the function checked, the check says so once, above its result (JupyterLab only, where the
kernel knows its notebook file): a definition the kernel holds and the saved file does not
(deleted, renamed, or edited and not saved), and a name the function uses that the grader's
program does not define (an exploration cell's import, a helper since deleted). The second is
worked out by the grader's own code (submission.build_program), so the kernel and
`drills check` say the same sentence.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class SelfCheck:
    def __init__(self, assignment: str, path: Path | str | None = None) -> None:
        """``path``: the saved notebook the kernel's definitions are compared with; by default
        this kernel's notebook in JupyterLab (widgets.notebook_path), none elsewhere."""
        self.assignment = assignment
        self._spec = None
        self._path = Path(path) if path is not None else None
        self._noted: set[tuple] = set()
        from autograder.widgets import warm_up

        warm_up(assignment)

    def tolerance(self, name: str) -> tuple[float, float]:
        """(rtol, atol): the stated tolerance of the graded function ``name``."""
        from autograder.scoring import memo

        if self._spec is None:  # the case module's specs, or the course form's outlines
            self._spec = memo.function_specs(self.assignment)
        f = self._spec[name]
        return f.rtol, f.atol

    def value(self, fn, *args, expected: Any, **kwargs) -> Any:
        """``fn(*args, **kwargs)``, checked against ``expected`` by the grader's rule; returns
        what ``fn`` returned (for further checks)."""
        from autograder.cases.codec import EncodeError, encode
        from autograder.cases.compare import render_pair, same_outcome

        name = getattr(fn, "__name__", "the function")
        call = f"{name}({_args(args, kwargs)})"
        self._say_kernel_differences(fn)
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
        self._say_kernel_differences(fn)
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

    def live(self, namespace: dict, needs: dict[str, str]) -> LiveFunctions:
        """The functions a live cell runs the tiny model on (:func:`live_functions`): this
        notebook's from ``namespace`` (the kernel's globals()), the others' looked for beside
        this notebook's saved file (JupyterLab) or in the working folder."""
        saved = self._saved_notebook()
        return live_functions(
            self.assignment, namespace, needs, saved.parent if saved is not None else None
        )

    def _saved_notebook(self) -> Path | None:
        if self._path is not None:
            return self._path
        if not os.environ.get("JPY_SESSION_NAME"):
            return None  # nbgrader, nbclient, a script: no saved file to differ from
        from autograder.widgets import notebook_path

        return notebook_path(self.assignment)

    def _say_kernel_differences(self, fn) -> None:
        """Print, once per definition and saved version, how the kernel's ``fn`` differs from
        what the grader will run (kernel_differences)."""
        path = self._saved_notebook()
        code = getattr(fn, "__code__", None)
        if path is None or code is None:
            return
        try:
            key = (getattr(fn, "__name__", ""), id(code), path.stat().st_mtime_ns)
        except OSError:
            return
        if key in self._noted:
            return
        self._noted.add(key)
        for line in kernel_differences(self.assignment, fn, path):
            print(f"⚠ {line}")


def kernel_differences(assignment: str, fn, path: Path) -> list[str]:
    """What the grader will run differently from this kernel's ``fn`` (a graded function), in
    sentences: the definitions ``fn`` reaches that the saved file holds otherwise (edited and
    not saved, or changed since), and the names it uses that the grader's program lacks
    (submission.build_program's note, as `drills check` shows it). [] when they agree or
    when it cannot be told (no source notebook, an unreadable file): it says nothing it
    cannot show."""
    from autograder.engine import submission
    from autograder.notebooks import notebook
    from autograder.scoring import memo
    from autograder.widgets import stale_definitions

    name = getattr(fn, "__name__", "")
    ns = getattr(fn, "__globals__", {})
    lines = []
    reached = {name} | _names_read(fn)
    stale = [n for n in stale_definitions(path, ns) if n in reached]
    if stale:
        lines.append(
            f"this check ran the kernel's {', '.join(f'`{n}`' for n in stale)}, which differs "
            f"from the saved notebook's {path.name} (edited and not saved yet, or the cell "
            "changed after it ran): the grade reads the saved file, so save it (Ctrl+S / ⌘S) "
            "and run the cell again"
        )
    try:
        names = list(memo.function_specs(assignment))
        if name not in names:
            return lines
        source_nb = notebook.source(assignment)
        prog = submission.build_program(
            assignment, source_nb, submission.load_notebook(path), names
        )
    except Exception:  # noqa: BLE001 (no source notebook, a file mid-save: say nothing)
        return lines
    if name in prog.unbound_notes:
        lines.append(prog.unbound_notes[name])
    return lines


def _names_read(fn) -> set[str]:
    """The global names ``fn``'s code (and the code nested in it) reads."""
    out: set[str] = set()
    todo = [getattr(fn, "__code__", None)]
    while todo:
        code = todo.pop()
        if code is None:
            continue
        out |= set(code.co_names)
        todo += [c for c in code.co_consts if hasattr(c, "co_names")]
    return out


def _short(x: Any, limit: int = 120) -> str:
    text = repr(x).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _args(args: tuple, kwargs: dict) -> str:
    return ", ".join(
        [_short(a, 60) for a in args] + [f"{k}={_short(v, 40)}" for k, v in kwargs.items()]
    )


# -- live cells on the learner's own functions --------------------------------------------------


class LiveFunctions:
    """The graded functions a live cell runs (a tiny-model probe or training), and what stops
    it: each function is the learner's own (this notebook's, or in the course form another of
    their notebooks'), or in the full form another notebook's reference; each of the learner's
    is first run on its function's value cases of the public draw (those `drills check` grades
    against). ``problems``: one sentence per function that is missing, not written yet, or
    gives another value; empty when the cell can run."""

    def __init__(self, functions: dict[str, Any], problems: list[str], sources: dict[str, str]):
        self.functions = functions  # name -> callable (those found)
        self.problems = problems
        self.sources = sources  # name -> where it came from, in words

    @property
    def ok(self) -> bool:
        return not self.problems

    def say(self, instead: str = "the shipped result") -> str:
        """What a live cell prints when it cannot run: which functions, why, and what it shows."""
        if self.ok:
            return "Your functions drive the model: " + ", ".join(
                f"{n} ({self.sources[n]})" for n in self.functions
            )
        return (
            "This cell runs the model on your functions; it cannot yet, so it shows "
            f"{instead} instead:\n" + "\n".join(f"  - {p}" for p in self.problems)
        )


def live_functions(
    assignment: str, namespace: dict, needs: dict[str, str], where: Path | None = None
) -> LiveFunctions:
    """The functions ``needs`` names (name -> the assignment that grades it) for a live cell of
    ``assignment``, whose kernel globals are ``namespace``: this notebook's own from
    ``namespace``; another notebook's from the reference solutions in the full form, and in
    the course form (no solutions) from the learner's own notebook of that assignment, looked
    for beside this one (``where``, default the working folder: ``<where>/<id>.ipynb``,
    ``<where>/../<id>/<id>.ipynb``, ``<where>/<id>/<id>.ipynb``). Every function that is the
    learner's is checked on its value cases (:func:`function_problem`)."""
    from autograder.notebooks import course_values, reference

    course = course_values.active()
    found: dict[str, Any] = {}
    problems: list[str] = []
    sources: dict[str, str] = {}
    others: dict[str, dict | str] = {}  # assignment -> namespace, or why there is none
    for name, owner in needs.items():
        if owner == assignment:
            fn, source = namespace.get(name), "yours, this notebook"
        elif not course:
            found[name] = reference.namespace(owner)[name]
            sources[name] = f"the reference of notebook {owner[:2]}"
            continue
        else:
            if owner not in others:
                others[owner] = _learner_notebook(owner, where)
            ns = others[owner]
            if isinstance(ns, str):
                problems.append(f"{name} (notebook {owner[:2]}): {ns}")
                continue
            fn, source = ns.get(name), f"yours, notebook {owner[:2]}"
        if fn is None or not callable(fn):
            problems.append(
                f"{name} (notebook {owner[:2]}): not defined"
                + (" in this notebook: run its cell" if owner == assignment else "")
            )
            continue
        problem = function_problem(owner, name, fn)
        if problem:
            problems.append(f"{name} (notebook {owner[:2]}): {problem}")
            continue
        found[name] = fn
        sources[name] = source
    return LiveFunctions(found, problems, sources)


def _learner_notebook(assignment: str, where: Path | None) -> dict | str:
    """The definitions of the learner's own notebook of ``assignment`` (its imports, functions
    and constants, as the answer-key scan runs them), or why there are none."""
    from autograder.course import answer_key

    base = Path(where) if where is not None else Path.cwd()
    file = f"{assignment}.ipynb"
    tried = [base / file, base.parent / assignment / file, base / assignment / file]
    for path in tried:
        if path.is_file():
            try:
                return answer_key.released_functions(path)[1]
            except (OSError, ValueError) as e:
                return f"your {file} could not be read ({e})"
    return (
        f"your {file} was not found (looked in {', '.join(str(p.parent) for p in tried)}); "
        "the course form has no reference to use in its place"
    )


def function_problem(assignment: str, name: str, fn) -> str | None:
    """Why ``fn`` cannot stand in for ``assignment``'s graded ``name`` in a live run, or None:
    it is a stub (raises NotImplementedError), it raises, or it gives another value than
    expected (the grader's tolerance) on a value case of the public draw."""
    from autograder.cases import seeds
    from autograder.cases.compare import same_outcome
    from autograder.notebooks import course_values
    from autograder.scoring import evaluate, memo

    try:
        out = memo.assignment_outcomes(assignment, seeds.PUBLIC_DEFAULT_SECRET)
    except course_values.CourseFormError as e:
        return str(e)
    spec, inputs, expected = out.specs[name], out.inputs[name], out.expected[name]
    value = [i for i, c in enumerate(spec.cases) if c.kind == "value" and "value" in expected[i]]
    ns = getattr(fn, "__globals__", {})
    for i in value:
        try:
            (got,), _ = evaluate.run_cases(fn, [inputs[i]], ns)
        except Exception as e:  # noqa: BLE001 (the learner's function, described)
            return f"running it failed ({type(e).__name__}: {e})"
        raised = got.get("raised")
        if raised is not None and "NotImplementedError" in str(got):
            return "not written yet (it raises NotImplementedError)"
        if not same_outcome(expected[i], got, spec.rtol, spec.atol):
            what = f"raises {raised}" if raised is not None else "gives another value"
            return (
                f"fails its check: on value case {spec.cases[i].id!r} it {what} than the "
                "grader expects (Check my work says more)"
            )
    return None
