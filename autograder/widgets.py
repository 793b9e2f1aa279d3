"""The "Check my work" button at the end of every notebook.

    from autograder.widgets import check_my_work
    check_my_work("01_exact_kl")

The button saves nothing and changes nothing. On a click it finds the notebook
file this kernel belongs to, runs ``drills check FILE --json`` on the *saved*
file in a separate process (the same cases and the same sandboxed engine as
``drills grade``), and shows the score and the feedback under the button.

Which file: JupyterLab starts each kernel with ``JPY_SESSION_NAME`` set to the
notebook's path and its working directory set to the notebook's folder; when
that variable does not name an existing ``.ipynb`` (classic runners, nbclient)
the button falls back to ``./<assignment>.ipynb``.

While the check runs the button says "Grading…". A stale file is never graded
silently: before grading, the button compares each function and class the
saved file's solution cells define with the kernel's definition of the same
name (its source, as the kernel ran it); when one differs, the report says,
next to the score, that the saved file is older than what was run.

In JupyterLab (``JPY_SESSION_NAME`` set: not under nbgrader or nbclient) the
button, when shown, every notebook's first code cell (before its imports, so the server's
start-up runs beside them) and its SelfCheck start ``drills warm ASSIGNMENT --serve`` in the background, once per kernel
(``DRILLS_WARM_CACHE=off`` turns it off): the check server
(autograder/course/check_server.py). It fills the outcome cache with the
expected and known-mistake outcomes, starts a sandboxed warm worker with
numpy (and torch for 05-06) imported, and then answers each click with what
``drills check FILE --json`` would print, computed by the same code with the
same defaults, without a new interpreter, imports or a torch import per
click. A click while the warm-up still runs joins it (the outcomes it is
computing are computed once) rather than computing the same outcomes beside
it. When there is no server (turned off, not in JupyterLab, or it died) the
click runs ``drills check FILE --json`` in a new process, after waiting for
a running warm-up (at most WARM_WAIT_S); a warm-up that fails changes
nothing: the check computes what it needs itself.
"""

from __future__ import annotations

import ast
import html
import inspect
import json
import os
import select
import subprocess
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.course import launch

CHECK_TIMEOUT_S = 300.0
WARM_WAIT_S = 60.0  # the longest a check waits for a running warm-up
STALE = "the saved file is older than what you ran: save with Ctrl+S and check again"


@dataclass
class CheckOutcome:
    """What one run of ``drills check`` gave: a report, or a message saying why there is none."""

    report: dict | None
    error: str | None = None
    detail: str = ""  # the command's stderr/stdout tail, shown under an error


def notebook_path(assignment: str, cwd: Path | None = None) -> Path | None:
    """The notebook file of this kernel, or None when it cannot be found."""
    cwd = Path.cwd() if cwd is None else cwd
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb"):
        p = Path(session)
        for candidate in (p, cwd / p, cwd / p.name):
            if candidate.is_file():
                return candidate.resolve()
    fallback = cwd / f"{assignment}.ipynb"
    return fallback.resolve() if fallback.is_file() else None


_WARMING: dict[str, subprocess.Popen] = {}


def warm_command(assignment: str) -> list[str]:
    """The check server's command line; started in launch.grader_cwd(), with an import path
    that holds no file of the notebook's folder (course/launch.py)."""
    return launch.grader_argv("warm", assignment, "--quiet", "--serve")


def start_warm(assignment: str) -> subprocess.Popen | None:
    """Start ``drills warm ASSIGNMENT`` in the background, once per kernel and assignment;
    None when turned off (DRILLS_WARM_CACHE=off, or the outcome cache is off) or when it cannot
    start."""
    from autograder.scoring import cache

    if cache.switched_off("DRILLS_WARM_CACHE") or cache.directory() is None:
        return None
    running = _WARMING.get(assignment)
    if running is not None:
        running.poll()  # reaps it once it has finished
        return running
    try:
        proc = subprocess.Popen(
            warm_command(assignment),
            stdin=subprocess.PIPE,  # check requests; its end (the kernel is gone) ends it
            stdout=subprocess.PIPE,  # the answers
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # an interrupted kernel does not interrupt it
            cwd=launch.grader_cwd(),  # not the notebook's folder (course/launch.py)
        )
    except OSError:
        return None
    _WARMING[assignment] = proc
    return proc


def warm_up(assignment: str) -> subprocess.Popen | None:
    """What every notebook's first code cell calls (before its imports: numpy's and torch's
    import in the kernel then overlap the server's own start-up and the sandbox's), its
    SelfCheck too, and the button when shown: start the warm-up, but only for a learner in JupyterLab
    (``JPY_SESSION_NAME`` set), never under nbgrader or nbclient."""
    if not os.environ.get("JPY_SESSION_NAME"):
        return None
    return start_warm(assignment)


def wait_for_warm(assignment: str, timeout: float = WARM_WAIT_S) -> None:
    """Let a warm-up of ``assignment`` that is still running finish (at most ``timeout``
    seconds) before a check starts: the check then reads its outcomes instead of computing
    the same ones beside it, two processes on the same cores."""
    proc = _WARMING.get(assignment)
    if proc is None or proc.poll() is not None:
        return
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass  # the check computes what it still needs


def ask_server(
    assignment: str, path: Path, timeout: float = CHECK_TIMEOUT_S
) -> CheckOutcome | None:
    """The check of ``path`` by this kernel's check server for ``assignment`` (start_warm),
    or None when there is none or it could not answer (the caller then runs ``drills check``
    itself). A server that takes longer than ``timeout`` is stopped, as a check would be."""
    proc = _WARMING.get(assignment)
    if proc is None or proc.poll() is not None or proc.stdin is None or proc.stdout is None:
        return None
    try:
        proc.stdin.write((json.dumps({"path": str(path)}) + "\n").encode())
        proc.stdin.flush()
        line = _read_line(proc.stdout.fileno(), timeout)
    except OSError:
        line = None
    if line is TimeoutError:
        _stop(assignment, proc)
        return CheckOutcome(None, f"The check did not finish within {timeout:g} seconds.")
    try:
        answer = json.loads(line) if isinstance(line, bytes) else None
        return _outcome(int(answer["returncode"]), answer["stdout"], answer["stderr"])
    except (ValueError, KeyError, TypeError):
        _stop(assignment, proc)  # a server that does not answer is not asked again
        return None


def _read_line(fd: int, timeout: float):
    """One line from ``fd`` (bytes), None at its end, TimeoutError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return TimeoutError
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return None
        chunks.append(chunk)
        if chunk.endswith(b"\n"):
            return b"".join(chunks)


def _stop(assignment: str, proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()
    _WARMING.pop(assignment, None)


def check_command(path: Path) -> list[str]:
    """``drills check PATH --json`` with an import path that holds no file of the notebook's
    folder, to be started in launch.grader_cwd() (course/launch.py)."""
    return launch.grader_argv("check", launch.absolute(path), "--json")


def run_check(path: Path, timeout: float = CHECK_TIMEOUT_S) -> CheckOutcome:
    """Run ``drills check PATH --json`` in a child process and parse its report."""
    try:
        proc = subprocess.run(
            check_command(path),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=launch.grader_cwd(),  # not the notebook's folder (course/launch.py)
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return CheckOutcome(None, f"The check did not finish within {timeout:g} seconds.")
    except OSError as e:
        return CheckOutcome(None, f"The check could not be started ({e}).")
    return _outcome(proc.returncode, proc.stdout, proc.stderr)


def _outcome(returncode: int, stdout: str, stderr: str) -> CheckOutcome:
    """What ``drills check --json`` exiting with ``returncode`` and printing ``stdout`` and
    ``stderr`` means for the learner (from a child process or from the check server)."""
    tail = _tail(stderr or stdout)
    if "invalid choice: 'check'" in stderr:
        return CheckOutcome(
            None,
            "`drills check` is not available in this installation of reward-drills "
            "(the sandboxed grader is missing). Update the repository and reinstall it "
            "with `pip install -e .`.",
            tail,
        )
    report = _parse_report(stdout)
    if report is None:
        return CheckOutcome(
            None, f"`drills check` failed (exit status {returncode}) and gave no report.", tail
        )
    if returncode != 0:
        report.setdefault("warnings", []).append(f"drills check exited with status {returncode}")
    return CheckOutcome(report)


def _parse_report(stdout: str) -> dict | None:
    """The JSON object on stdout (the whole of it, or else its last line that parses)."""
    text = stdout.strip()
    candidates = [text] + [line for line in reversed(text.splitlines()) if line.startswith("{")]
    for c in candidates:
        try:
            obj = json.loads(c)
        except ValueError:
            continue
        if isinstance(obj, dict) and "score" in obj and "functions" in obj:
            return obj
    return None


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join((text or "").strip().splitlines()[-lines:])


# -- is the saved file what the kernel ran? ----------------------------------------------------


def _normalized(source: str) -> list | str:
    """The code of ``source`` without comments, blank lines or spacing: what runs. (A
    kernel's copy of a function ends with the comments below its last line, e.g. nbgrader's
    ``### END SOLUTION``; the saved cell's ends at the last statement.)"""
    import io
    import tokenize

    text = textwrap.dedent(source).strip("\n") + "\n"
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        return [(t.type, t.string) for t in tokens if t.type not in skip]
    except (tokenize.TokenError, SyntaxError):
        return "\n".join(line.rstrip() for line in text.splitlines()).strip()


def saved_definitions(path: Path) -> dict[str, str]:
    """Source of each top-level function and class in the saved file's solution cells (the
    last definition of a name wins, as in a kernel that ran the cells in order)."""
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
        cells = [c for c in nb.get("cells", []) if isinstance(c, dict)]
    except (OSError, ValueError, AttributeError):
        return {}
    out: dict[str, str] = {}
    for cell in cells:
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        if (
            cell.get("cell_type") != "code"
            or not isinstance(meta, dict)
            or not meta.get("solution")
        ):
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else str(src)
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        lines = src.splitlines()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out[node.name] = "\n".join(lines[first - 1 : node.end_lineno])
    return out


def stale_definitions(path: Path, namespace: dict) -> list[str]:
    """Names whose definition in ``namespace`` (the kernel's) differs from the saved file's
    solution cells. Names the kernel has not defined, or whose source it cannot show, are
    left out: only a difference the kernel can prove is reported."""
    stale = []
    for name, saved in saved_definitions(path).items():
        obj = namespace.get(name)
        if obj is None or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        try:
            ran = inspect.getsource(obj)
        except (OSError, TypeError):
            continue
        if _normalized(ran) != _normalized(saved):
            stale.append(name)

    return stale


# -- rendering ---------------------------------------------------------------------------------

_STYLE = (
    "<style>"
    ".drills-report table{border-collapse:collapse;margin:0.4em 0}"
    ".drills-report td,.drills-report th{border:1px solid #ccc;padding:2px 8px;"
    "text-align:left !important;vertical-align:top}"
    ".drills-report .drills-why{white-space:pre-wrap;font-family:monospace}"
    ".drills-report .ok{color:#1a7f37}.drills-report .bad{color:#b3261e}.drills-report .todo{color:#8a6d00}"
    "</style>"
)


def _points(x) -> str:
    """A cost as the terminal writes it (evaluate.points_text: "1 point", "0.5 points")."""
    try:
        p = float(x)
    except (TypeError, ValueError):
        return html.escape(str(x)) + " points"
    return f"{p:g} point" + ("" if p == 1 else "s")


# What a function left as its stub, or not graded, costs, as the terminal says it
# (evaluate.NOT_ATTEMPTED, evaluate.NOT_GRADED; not imported: this module stays light)
NOT_ATTEMPTED = "not attempted yet: it still raises NotImplementedError"
NOT_GRADED = "Not graded: none of its checks counted"


def _lost(f: dict) -> float:
    """What a function lost (evaluate.lost_points), from its report entry."""
    try:
        return round(round(float(f.get("points", 0)), 2) - float(f.get("score", 0)), 2)
    except (TypeError, ValueError):
        return 0.0


def _message(text: str) -> str:
    """A message of the grader: inline, or when it spans lines (a syntax error's line and the
    caret under it) a block that keeps its lines and spaces in monospace, so the caret stays
    under its column."""
    if "\n" not in text:
        return html.escape(text)
    return f'<div class="drills-why">{html.escape(text)}</div>'


def _fmt(x) -> str:
    try:
        return f"{float(x):g}"
    except (TypeError, ValueError):
        return html.escape(str(x))


def render_report(report: dict, path: Path | None = None, stale: list[str] | None = None) -> str:
    """HTML for a ``drills check --json`` report: a score line, then one table row per function.

    ``stale``: names the kernel defines differently from the saved file (stale_definitions);
    when there are any, a warning stands next to the score."""
    e = html.escape
    score, max_score = report.get("score", 0), report.get("max_score", 0)
    full = _is_full(score, max_score)
    parts = [_STYLE, '<div class="drills-report">']
    parts.append(
        f'<p class="drills-score {"ok" if full else "bad"}"><b>Score: {_fmt(score)} / {_fmt(max_score)} points</b>'
        + (" (full marks)" if full else "")
        + "</p>"
    )
    if stale:
        parts.append(
            f'<p class="drills-stale bad"><b>⚠ {e(STALE)}</b> '
            f"(what you ran differs from the saved file in: {e(', '.join(stale))})</p>"
        )
    if path is not None:
        parts.append(f"<p><small>checked the saved file {e(str(path))}</small></p>")
    parts.append(
        "<table><tr><th>function</th><th>points</th><th>checks passed</th><th>feedback</th></tr>"
    )
    for f in report.get("functions", []):
        cases = f.get("cases") or []
        passed = sum(1 for c in cases if c.get("passed"))
        # every point lost has its cost line, in evaluate.feedback_text's words
        lost = _lost(f)
        if f.get("error"):
            # could not be graded (its own definition does not compile, a deleted cell, a
            # crashed run): the reason, as `drills check` prints it, never "not attempted"
            cls, feedback = "bad", f'<div class="drills-why">{e(str(f["error"]))}</div>'
            if f.get("note"):
                feedback += e(str(f["note"])) + "<br>"
            feedback += f"{e(NOT_GRADED)} (costs {_points(lost)})"
        elif not f.get("attempted", True):
            cls, feedback = "todo", f"{e(NOT_ATTEMPTED)} (costs {_points(lost)})"
        elif cases and passed == len(cases) and not f.get("error"):
            cls, feedback = "ok", "all checks passed"
            if f.get("note"):  # graded with a reference callee: said, as `drills check` does
                feedback += "<br>" + e(str(f["note"]))
        else:
            cls = "bad"
            items = []
            if f.get("note"):
                items.append(e(str(f["note"])))
            diagnoses = f.get("diagnoses") or (
                [{"kind": "concept", "text": f["diagnosis"]}] if f.get("diagnosis") else []
            )
            for d in diagnoses:
                label = DIAGNOSIS_LABELS.get(d.get("kind"), "Diagnosis")
                cost = f" (costs {_points(d['points'])})" if "points" in d else ""
                items.append(f"<b>{e(label)}:</b> {e(str(d.get('text', '')))}{cost}")
            rest = f.get("unexplained_checks")
            if isinstance(rest, int) and rest > 0:
                # the failed checks no line explains (evaluate.unexplained_line)
                one = rest == 1
                items.append(
                    f"<b>Not recognised:</b> {rest} failed "
                    f"{'check matches' if one else 'checks match'} no known mistake or pattern; "
                    f"see {'its ✗ line' if one else 'the ✗ lines'} "
                    f"(costs {_points(f.get('unexplained', 0))})"
                )
            failed = [c for c in cases if not c.get("passed")]
            for c in failed[:5]:
                items.append("✗ " + e(str(c.get("note") or c.get("id", ""))))
            if len(failed) > 5:
                items.append(f"… and {len(failed) - 5} more failed checks")
            feedback = "<br>".join(items) or "some checks failed"
        parts.append(
            f'<tr class="{cls}"><td><code>{e(str(f.get("function", "?")))}</code></td>'
            f"<td>{_fmt(f.get('score', 0))} / {_fmt(f.get('points', 0))}{_kinds_html(f)}</td>"
            f"<td>{f'{passed} / {len(cases)}' if cases else '—'}</td><td>{feedback}</td></tr>"
        )
    parts.append("</table>")
    warnings = report.get("warnings") or []
    if warnings:
        parts.append(
            "<p><b>Warnings</b></p><ul>"
            + "".join(f"<li>{_message(str(w))}</li>" for w in warnings)
            + "</ul>"
        )
    parts.append("</div>")
    return "".join(parts)


# What each diagnosis is, as the terminal labels it (evaluate.DIAGNOSIS_LABELS)
DIAGNOSIS_LABELS = {
    "concept": "Recognised mistake",
    "validation": "Recognised mistake (input checks)",
    "shape": "What your function does",
    "property": "A property the notebook states",
    "where": "Where your function goes wrong",
    "helper": "A helper to fix",
    "name": "A name the grader's program lacks",
}


def _kinds_html(f: dict) -> str:
    """The points per part under a function's points, as the terminal prints them
    (evaluate.kinds_text): "the formula 1.4 / 2.1 · edge cases 0.45 / 0.45 · …"."""
    kinds = [k for k in f.get("kinds") or [] if isinstance(k, dict)]
    if not kinds or f.get("error") or not f.get("attempted", True):
        return ""
    text = " · ".join(
        f"{html.escape(str(k.get('label', k.get('kind', '?'))))} "
        f"{_fmt(k.get('score', 0))} / {_fmt(k.get('points', 0))}"
        for k in kinds
    )
    return f'<br><small class="drills-kinds">{text}</small>'


def render_error(message: str, detail: str = "") -> str:
    out = f'{_STYLE}<div class="drills-report"><p class="drills-error bad"><b>Could not check your work.</b> {html.escape(message)}</p>'
    if detail:
        out += f"<pre>{html.escape(detail)}</pre>"
    return out + "</div>"


def _is_full(score, max_score) -> bool:
    try:
        return float(max_score) > 0 and abs(float(score) - float(max_score)) < 1e-9
    except (TypeError, ValueError):
        return False


# -- the widget --------------------------------------------------------------------------------


def _kernel_namespace() -> dict:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return {}
    shell = get_ipython()
    return shell.user_ns if shell is not None else {}


def check_my_work(
    assignment: str, timeout: float = CHECK_TIMEOUT_S, namespace: dict | None = None
) -> None:
    """Show the "Check my work" button and the area where its result appears.

    ``namespace``: where the learner's definitions live (default: the kernel's user namespace),
    compared with the saved file before each check.
    Returns None, so the notebook does not display the box a second time as the cell's result.
    """
    import ipywidgets as widgets
    from IPython.display import HTML, display

    button = widgets.Button(
        description="Check my work",
        button_style="primary",
        icon="check",
        tooltip="Grade the saved notebook with the hidden cases (saves nothing)",
        layout=widgets.Layout(width="auto"),
    )
    button.add_class("drills-check-button")
    hint = widgets.HTML("<small>Save first (Ctrl+S / ⌘S): the check reads the saved file.</small>")
    out = widgets.Output()
    out.add_class("drills-check-output")

    def on_click(_=None):
        button.disabled = True
        button.description = "Grading…"
        out.clear_output()
        try:
            path = notebook_path(assignment)
            if path is None:
                html_text = render_error(
                    f"Could not find this notebook's file ({assignment}.ipynb in {Path.cwd()}). "
                    f"Run `drills check PATH/TO/{assignment}.ipynb` in a terminal instead."
                )
            else:
                with out:
                    display(
                        HTML(
                            '<p class="drills-grading">Grading… (checking the saved file '
                            f"{html.escape(path.name)})</p>"
                        )
                    )
                ns = namespace if namespace is not None else _kernel_namespace()
                stale = stale_definitions(path, ns)
                outcome = ask_server(assignment, path, timeout)
                if outcome is None:
                    wait_for_warm(assignment)
                    outcome = run_check(path, timeout)
                out.clear_output()
                if outcome.report is not None:
                    html_text = render_report(outcome.report, path, stale)
                else:
                    html_text = render_error(outcome.error or "unknown error", outcome.detail)
            with out:
                display(HTML(html_text))
        finally:
            button.description = "Check my work"
            button.disabled = False

    button.on_click(on_click)
    box = widgets.VBox([widgets.HBox([button, hint]), out])
    display(box)
    warm_up(assignment)
