"""Do the notebooks work for a learner in a real JupyterLab, in a real browser?

One JupyterLab server (free local port, a token, a scratch copy of exercises/
and solutions/ so nothing in the repository is written) and one headless
Chromium driven by Playwright, on one page: the first notebook loads JupyterLab,
the next ones are opened in the same app after the previous one is closed and
its kernel stopped (no reload: it would cost seconds per notebook on 2 cores).
For each notebook:

The notebooks of a slice (conftest.BROWSER_SLICE: 01 and 05, the first notebook and the
first tiny-model notebook) run here; tests/test_notebooks.py runs the other ten with
nbclient and the same checks on the executed notebook; DRILLS_BROWSER_ALL=1 (or
DRILLS_SWEEP=1, `make sweep`) runs all fourteen here.

- exercises/<id>/<id>.ipynb: run every
  code cell, as a learner would who runs on past each unsolved function (Run All
  stops at the first error, and an unsolved notebook has many: "Run Selected Cell
  and All Below" from the cell after each error, a few round trips in all); the
  only errors allowed are the NotImplementedError of unsolved functions; every
  widget cell shows its widget, every plotting cell that did not raise shows an
  image; "Check my work" reports 0 points.
- solutions/<id>/<id>.ipynb: Run > Run All Cells; no error anywhere; the
  widgets and figures render; "Check my work" reports full marks.

On the notebook JupyterLab saved, both make the checks of tests/test_notebooks.py
(tests/notebook_checks.py: every hidden test at full points and silent on stderr;
an exercise's only errors NotImplementedError), which then skips those
notebooks: each notebook is executed once per test session.

Each notebook gets a full-height screenshot in test-artifacts/screenshots/ and
its timings go to test-artifacts/browser-timings.json, among them the seconds
from the click on "Check my work" to its result, for a first click (the outcome
cache emptied before the notebook opened; the kernel's warm-up may still run) and
a second one (targets: 1.0 s for the NumPy notebooks, 2.5 s for those whose grading
imports torch, as the assignment registry says: click_target; a benchmark, printed
and recorded, not an assertion: benchmarks/clicks.py measures them on their own)
and the load average.

Every wait is on a condition, never a fixed sleep: all code cells rendered,
every cell executed and the kernel idle, the widget rendered, the result shown.
When a time-out expires the failure says what it waited for and what the page
showed.

Needs Debian's Chromium at /usr/bin/chromium (or $DRILLS_CHROMIUM) and the
playwright package; without them the tests skip and say why (.ci/run installs
Chromium, so CI runs them).
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from conftest import CHROMIUM, browser_notebook, browser_skip_reason
from notebook_checks import exercise_problems, is_plot_cell, is_widget_cell, solution_problems

from autograder import assignments

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def click_target(assignment: str) -> float:
    """Seconds from the click to the result to aim for: 2.5 where grading imports torch
    (the assignment registry's answer, not the notebook's name), 1.0 for the NumPy ones."""
    return 2.5 if assignments.uses_torch(assignment) else 1.0


NOTEBOOK_TIMEOUT_S = 180  # one notebook, all cells (05/06 take ~40 s on 2 cores)
CHECK_TIMEOUT_S = 120  # "Check my work" on one notebook

pytestmark = pytest.mark.slow


SKIP = browser_skip_reason()
if SKIP:
    pytestmark = [pytest.mark.slow, pytest.mark.skip(reason=SKIP)]


def _notebooks(kind: str) -> list[str]:
    return sorted(p.parent.name for p in (ROOT / kind).glob("*/*.ipynb") if p.stem == p.parent.name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_settings(settings: Path) -> None:
    """JupyterLab user settings for a test: every cell in the DOM, no news pop-up, no autosave."""
    files = {
        # Windowed notebooks detach off-screen cells from the DOM; the checks read every cell.
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
            "windowingMode": "none",
            "scrollPastEnd": False,
        },
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    }
    for rel, value in files.items():
        p = settings / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(value))


class Lab:
    def __init__(self, base: str, token: str, root: Path, proc: subprocess.Popen, log: Path):
        self.base, self.token, self.root, self.proc, self.log = base, token, root, proc, log

    def api(self, method: str, path: str):
        req = urllib.request.Request(
            f"{self.base}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def wait_started(self, timeout_s: float) -> None:
        """Poll the server until it answers; fail with its log when it exits or time runs out."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.api("GET", "/api/status")
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"jupyter lab did not start:\n{self.log.read_text()[-3000:]}")
                time.sleep(0.3)  # polling the server's port until it answers

    def shutdown_sessions(self) -> None:
        """Stop every kernel, so the next notebook has the CPU to itself."""
        for s in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{s['id']}")

    def kernel_state(self, rel: str) -> str:
        """The server's execution state of the kernel of the session of notebook ``rel``."""
        for s in self.api("GET", "/api/sessions") or []:
            if s.get("path") == rel and s.get("kernel"):
                return str(s["kernel"].get("execution_state"))
        return "no session"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lab")
    root = tmp / "course"
    for kind in ("exercises", "solutions"):
        shutil.copytree(
            ROOT / kind,
            root / kind,
            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
        )
    _write_settings(tmp / "settings")
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # conftest sets Agg for tests; kernels need the inline backend
    env.pop("JPY_SESSION_NAME", None)
    env.update(
        JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
        JUPYTER_CONFIG_DIR=str(tmp / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
    )
    port, token = _free_port(), "browser-test-" + os.urandom(8).hex()
    log = tmp / "jupyter-lab.log"
    cmd = [
        str(Path(sys.executable).parent / "jupyter"),
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        # window.jupyterapp, as JupyterLab's own browser tests (galata) set it: open_notebook
        # opens each notebook after the first with the app's commands, not a page reload.
        "--LabApp.expose_app_in_browser=True",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    with open(log, "w") as logf:
        proc = subprocess.Popen(
            cmd, env=env, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = Lab(f"http://127.0.0.1:{port}", token, root, proc, log)
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)  # no stale pictures from an earlier run
    try:
        server.wait_started(60)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        ARTIFACTS.mkdir(exist_ok=True)
        shutil.copy(log, ARTIFACTS / "jupyter-lab.log")


@pytest.fixture(scope="module")
def page(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        pg = context.new_page()
        pg.on("pageerror", lambda e: PAGE_ERRORS.append(str(e)))
        try:
            yield pg
        finally:
            browser.close()


TIMINGS: dict[str, dict] = {}
PAGE_ERRORS: list[str] = []  # uncaught JavaScript errors in JupyterLab's page


@pytest.fixture(scope="module", autouse=True)
def _write_timings():
    yield
    if TIMINGS:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "browser-timings.json").write_text(json.dumps(TIMINGS, indent=2))


# -- driving JupyterLab ------------------------------------------------------------------------
#
# Every wait is on a condition (cells rendered, cells executed, kernel idle, widget shown,
# result shown) with a generous time-out; when one expires the failure says what was awaited
# and what the page showed instead. No fixed sleeps.

_PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
_IDLE = f'{_PANEL} .jp-Notebook-ExecutionIndicator[data-status="idle"]'
_PROMPTS_JS = f"""() => Array.from(document.querySelectorAll(
    '{_PANEL} .jp-Notebook .jp-CodeCell .jp-InputArea-prompt'))
    .map(e => e.innerText.trim())"""
_KERNEL_NAME_JS = f"""() => {{
  const k = document.querySelector('{_PANEL} .jp-Toolbar-kernelName');
  return k ? k.innerText.trim() : '';
}}"""
_NO_KERNEL = ("", "No Kernel", "Kernel")
_DIALOG_JS = """() => {
  const d = document.querySelector('.jp-Dialog');
  return d ? d.innerText.replace(/\\s+/g, ' ').trim().slice(0, 200) : '';
}"""
_STATUS_JS = f"""() => {{
  const s = document.querySelector('{_PANEL} .jp-Notebook-ExecutionIndicator');
  return s ? s.getAttribute('data-status') : 'no kernel indicator';
}}"""


def page_state(page) -> str:
    """A short description of the notebook's state, for failure messages."""
    try:
        prompts = page.evaluate(_PROMPTS_JS)
        dialog = page.evaluate(_DIALOG_JS)
        return (
            f"kernel {page.evaluate(_STATUS_JS)!r} ({page.evaluate(_KERNEL_NAME_JS)!r}), "
            f"{len(prompts)} code cells, prompts {prompts}"
            + (f"; a dialog is open: {dialog!r}" if dialog else "")
        )
    except Exception as e:  # noqa: BLE001 (the page itself may be the problem)
        return f"page state unavailable ({e})"


def wait_until(page, condition, timeout_s: float, what: str, poll_s: float = 0.1):
    """Poll ``condition()`` until it returns something true; fail saying ``what`` was awaited."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout_s:g} s waiting for {what}; {page_state(page)}"
            )
        page.wait_for_timeout(poll_s * 1000)  # yields to the page's event loop between polls


def wait_for_selector(page, selector: str, timeout_s: float, what: str):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return page.wait_for_selector(selector, timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        raise AssertionError(
            f"timed out after {timeout_s:g} s waiting for {what} ({selector}); {page_state(page)}"
        ) from None


_CLOSE_ALL_JS = """async () => {
  const app = window.jupyterapp;
  // The test saved the notebook; whatever changed since (a failed test's half-run notebook)
  // is dropped, not saved, and no "Save your work?" dialog stops the close.
  for (const w of app.shell.widgets('main')) {
    if (w.context) w.context.model.dirty = false;
  }
  await app.commands.execute('application:close-all');
}"""
_OPEN_JS = (
    "async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }"
)
_IN_APP_JS = "() => Boolean(window.jupyterapp) && !document.querySelector('.jp-Dialog')"


def open_notebook(page, lab: Lab, rel: str, code_cells: int) -> dict:
    """Open a notebook as the only document; return once all its code cells are in the page
    and its kernel is started, connected and idle. Returns the seconds of each phase (the
    previous notebook closed and the kernels stopped, the cells rendered, the kernel idle)
    and how it was opened.

    The first notebook loads JupyterLab's page; the next ones are opened in the same app
    (close every document, stop the kernels, ``docmanager:open``), which spares Chromium
    parsing and laying out JupyterLab again: seconds per notebook on 2 busy cores. A page
    with a dialog open (a failed test's) is loaded afresh instead."""
    t0 = time.monotonic()
    in_app = page.url.startswith(lab.base) and page.evaluate(_IN_APP_JS)
    if in_app:
        page.evaluate(_CLOSE_ALL_JS)
        wait_until(
            page,
            lambda: page.locator(".jp-NotebookPanel").count() == 0,
            60,
            "the previous notebook to close",
        )
    # After the close: a kernel stopped under an open notebook would make JupyterLab report it.
    lab.shutdown_sessions()
    t_shutdown = time.monotonic()
    if in_app:
        page.evaluate(_OPEN_JS, rel)
    else:
        # ?reset: a fresh workspace, so the previous notebook's tab is not restored beside this one.
        page.goto(f"{lab.base}/lab/tree/{rel}?reset&token={lab.token}")
    wait_for_selector(page, f"{_PANEL} .jp-Notebook .jp-Cell", 120, f"{rel} to render")
    # A cold JupyterLab under load renders a long notebook in several passes: wait for all of it.
    wait_until(
        page,
        lambda: len(page.evaluate(_PROMPTS_JS)) == code_cells,
        120,
        f"all {code_cells} code cells of {rel} to render",
    )
    t_render = time.monotonic()
    # The page's kernel indicator says "idle" before any kernel is attached (its default), so
    # also wait for the server to report this notebook's kernel idle, and for the toolbar to
    # name it: a cell run before that opens JupyterLab's "Select Kernel" dialog.
    wait_for_selector(page, _IDLE, 120, f"the kernel indicator of {rel} to say idle")
    wait_until(
        page,
        lambda: (
            lab.kernel_state(rel) == "idle" and page.evaluate(_KERNEL_NAME_JS) not in _NO_KERNEL
        ),
        120,
        f"the server to report the kernel of {rel} idle and the toolbar to name it",
    )
    # Fold the file browser away: the screenshots get the notebook's full width.
    sidebar_tab = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
    if sidebar_tab.count():
        sidebar_tab.first.click()
    t_kernel = time.monotonic()
    return {
        "shutdown_s": round(t_shutdown - t0, 2),
        "render_s": round(t_render - t_shutdown, 2),
        "kernel_s": round(t_kernel - t_render, 2),
        "opened_by": "docmanager:open" if in_app else "page load",
    }


def code_cells(page):
    return page.locator(f"{_PANEL} .jp-Notebook .jp-CodeCell")


def _all_executed(page, count: int) -> bool:
    prompts = page.evaluate(_PROMPTS_JS)
    return (
        len(prompts) == count
        and all(re.fullmatch(r"\[\d+\]:", p) for p in prompts)
        and page.locator(_IDLE).count() > 0
    )


def wait_all_executed(page, count: int, timeout_s: float) -> None:
    """Wait until each of the ``count`` code cells shows an execution count and the kernel is idle."""
    wait_until(page, lambda: _all_executed(page, count), timeout_s, "every code cell to run")


def run_all_cells(page, count: int, timeout_s: float) -> None:
    # On a busy machine the menu click can be lost before the kernel is wired up: if no cell
    # is queued or run 20 s after a click, click again (Run All is idempotent until it starts).
    for _ in range(3):
        page.click(".lm-MenuBar-itemLabel:text-is('Run')")
        page.click(".lm-Menu-item:has-text('Run All Cells')")
        try:
            wait_until(
                page,
                lambda: any(p != "[ ]:" for p in page.evaluate(_PROMPTS_JS)),
                20,
                "Run All Cells to start",
            )
            break
        except AssertionError:
            continue
    wait_all_executed(page, count, timeout_s)


def _run_one_cell(page, prompt_area, i: int, timeout_s: float) -> None:
    pressed = None

    def done():
        nonlocal pressed
        prompt = prompt_area.inner_text().strip()
        if re.fullmatch(r"\[\d+\]:", prompt) and page.locator(_IDLE).count():
            return True
        if prompt == "[ ]:" and (pressed is None or time.monotonic() - pressed > 5):
            # Not queued yet (or the key press was lost while the page was busy): press again.
            prompt_area.click()
            page.keyboard.press("Control+Enter")
            pressed = time.monotonic()
        return False

    wait_until(page, done, timeout_s, f"code cell {i} to run")


_LAST_ERROR_JS = f"""(i) => {{
  const cell = document.querySelectorAll('{_PANEL} .jp-Notebook .jp-CodeCell')[i];
  const out = cell ? cell.querySelector('.jp-OutputArea') : null;
  return out ? Array.from(out.querySelectorAll(
      '[data-mime-type="application/vnd.jupyter.stderr"]')).map(e => e.innerText) : [];
}}"""


def _stopped_after_error(page, lab: Lab, rel: str, first: int) -> bool:
    """Has the run started at code cell ``first`` ended, every cell it ran done, the kernel idle
    (the page and the server say so), and the last cell it ran either the notebook's last or
    one that raised (JupyterLab stops a run at an error; nothing else stops it)?"""
    prompts = page.evaluate(_PROMPTS_JS)
    if prompts[first] == "[ ]:" or any(p == "[*]:" for p in prompts):
        return False
    if not page.locator(_IDLE).count() or lab.kernel_state(rel) != "idle":
        return False
    pending = [i for i, p in enumerate(prompts) if p == "[ ]:" and i > first]
    return not pending or bool(error_names(page.evaluate(_LAST_ERROR_JS, pending[0] - 1)))


def run_all_past_errors(page, lab: Lab, rel: str, count: int, timeout_s: float) -> None:
    """Run every code cell, errors and all, in a few round trips: Run > Run Selected Cell and
    All Below from the first cell; JupyterLab stops at a cell that raises (an unsolved
    function's NotImplementedError), and the next run starts at the cell after it. Cells run in
    order, each once, as when run one at a time."""
    deadline = time.monotonic() + timeout_s
    cells = code_cells(page)
    assert cells.count() == count, f"{cells.count()} code cells in the page, {count} in the file"
    for _ in range(count):
        pending = [i for i, p in enumerate(page.evaluate(_PROMPTS_JS)) if p == "[ ]:"]
        if not pending:
            break
        first = pending[0]
        if len(pending) == 1:  # the menu item is disabled on a notebook's last cell
            prompt_area = cells.nth(first).locator(".jp-InputArea-prompt")
            _run_one_cell(page, prompt_area, first, max(1.0, deadline - time.monotonic()))
            continue
        # On a busy machine a click can be lost: if cell ``first`` is not queued or run 20 s
        # after the menu click, select it and click again (nothing ran, so nothing runs twice).
        for attempt in range(3):
            cells.nth(first).locator(".jp-InputArea-prompt").click()
            page.click(".lm-MenuBar-itemLabel:text-is('Run')")
            page.click(".lm-Menu-item:has-text('Run Selected Cell and All Below')")
            try:
                wait_until(
                    page,
                    lambda first=first: page.evaluate(_PROMPTS_JS)[first] != "[ ]:",
                    20,
                    f"the run from code cell {first} to start",
                )
                break
            except AssertionError:
                if attempt == 2:
                    raise
        wait_until(
            page,
            lambda first=first: _stopped_after_error(page, lab, rel, first),
            max(1.0, deadline - time.monotonic()),
            f"the run from code cell {first} to stop at an error or the last cell",
        )
    wait_all_executed(page, count, max(1.0, deadline - time.monotonic()))


def save(page) -> None:
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    wait_until(
        page,
        lambda: page.evaluate(
            "() => !document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty')"
        ),
        60,
        "the notebook to be saved",
    )


_RESULT = ".drills-check-output .drills-score, .drills-check-output .drills-error"


_SEEN = "data-drills-seen"  # marks a result shown before this click


def check_my_work(page) -> tuple[str, float]:
    """Press the notebook's "Check my work" button; return the text it shows and the seconds
    from the click to the result (a new one: results shown before the click are marked)."""
    wait_for_selector(page, ".drills-check-button", 120, "the 'Check my work' button to render")
    button = page.locator(".drills-check-button")
    assert button.count() == 1, f"expected one 'Check my work' button, found {button.count()}"
    button.scroll_into_view_if_needed()
    page.evaluate(
        f"() => document.querySelectorAll('{_RESULT}').forEach(e => e.setAttribute('{_SEEN}', ''))"
    )
    new = ", ".join(f"{r.strip()}:not([{_SEEN}])" for r in _RESULT.split(","))
    t0 = time.monotonic()
    button.click()
    wait_for_selector(page, new, CHECK_TIMEOUT_S, "the result of 'Check my work'")
    seconds = time.monotonic() - t0
    return page.locator(".drills-check-output").inner_text(), seconds


_CELL_REPORT_JS = """() => Array.from(document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell')).map(cell => {
  const outputs = cell.querySelector('.jp-OutputArea');
  const stderr = outputs ? Array.from(outputs.querySelectorAll(
      '[data-mime-type="application/vnd.jupyter.stderr"]')).map(e => e.innerText) : [];
  return {
    images: outputs ? outputs.querySelectorAll('img').length : 0,
    widgets: outputs ? outputs.querySelectorAll('.jupyter-widgets').length : 0,
    stderr: stderr,
    text: outputs ? outputs.innerText : '',
  };
})"""

_ERROR_NAME = re.compile(r"^\s*(\w+(?:Error|Exception|Exit|Interrupt|Warning))\b", re.M)


def error_names(stderr_texts: list[str]) -> list[str]:
    """The exception names in rendered tracebacks (first name on each traceback's first line)."""
    names = []
    for t in stderr_texts:
        if "Traceback" in t or re.search(r"^\w+Error\b", t, re.M):
            m = _ERROR_NAME.search(t)
            names.append(m.group(1) if m else "unknown error")
    return names


def inspect_cells(page, sources: list[str]) -> list[dict]:
    cells = page.evaluate(_CELL_REPORT_JS)
    assert len(cells) == len(sources), (
        f"{len(cells)} code cells in the page, {len(sources)} in the file"
    )
    for c, src in zip(cells, sources):
        c["errors"] = error_names(c["stderr"])
        c["plot_cell"], c["widget_cell"] = is_plot_cell(src), is_widget_cell(src)
        c["first_line"] = src.strip().splitlines()[0][:70] if src.strip() else ""
    return cells


_TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def screenshot(page, name: str) -> Path:
    """The whole notebook in one image: make the window as tall as the notebook, then shoot."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate(
        """() => { const s = document.querySelector(
              '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
           return s ? s.scrollHeight : 1000; }"""
    )
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": min(int(height) + 200, 30_000)})
    page.evaluate(_TWO_FRAMES)  # the new size laid out and painted
    page.evaluate(
        """() => { const s = document.querySelector(
              '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
           if (s) s.scrollTop = 0; }"""
    )
    page.evaluate(_TWO_FRAMES)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    page.set_viewport_size(size)
    return path


@contextlib.contextmanager
def screenshot_on_failure(page, name: str):
    try:
        yield
    except BaseException:
        screenshot(page, name + "-FAILED")
        raise


def code_sources(path: Path) -> list[str]:
    nb = json.loads(path.read_text())
    return [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in nb["cells"]
        if c["cell_type"] == "code"
    ]


# What an exploration cell of 05/06 prints when the probe it needs could not run yet.
SKIPPED = "Skipped until the functions above are written"


def _problems_with_rendering(cells: list[dict]) -> list[str]:
    problems = []
    for i, c in enumerate(cells):
        # A cell that raised (allowed only in exercises) shows no figure; neither does one
        # that says it waits for the learner's unfinished functions (05-07 exercises).
        excused = bool(c["errors"]) or SKIPPED in c["text"]
        if c["plot_cell"] and not excused and c["images"] == 0:
            problems.append(f"cell {i} ({c['first_line']}) plots but shows no image")
        if (
            c["widget_cell"]
            and not (excused and ("NotImplementedError" in c["errors"] or SKIPPED in c["text"]))
            and c["widgets"] == 0
        ):
            problems.append(f"cell {i} ({c['first_line']}) makes a widget but none rendered")
        if "Error displaying widget" in c["text"]:
            problems.append(f"cell {i}: {c['text'][:200]}")
    return problems


def _open_run_check(page, lab: Lab, kind: str, assignment: str, run) -> tuple[list[dict], str]:
    """Open ``<kind>s/<id>/<id>.ipynb``, run it with ``run``, save, press Check my work; record
    timings and a screenshot. Returns the inspected cells and the check's text."""
    rel = f"{kind}s/{assignment}/{assignment}.ipynb"
    sources = code_sources(lab.root / rel)
    _empty_outcome_cache()  # the first click is timed from an empty cache
    t0 = time.monotonic()
    with screenshot_on_failure(page, f"{kind}-{assignment}"):
        open_phases = open_notebook(page, lab, rel, len(sources))
        t_open = time.monotonic()
        run(page, len(sources), NOTEBOOK_TIMEOUT_S)
    t_run = time.monotonic()
    cells = inspect_cells(page, sources)
    save(page)
    with screenshot_on_failure(page, f"{kind}-{assignment}"):
        check_text, click_to_result = check_my_work(page)
        load_at_click = os.getloadavg()
        again_text, second_click = check_my_work(page)
    t_check = time.monotonic()
    assert again_text == check_text, "a second click on the same file reported otherwise"
    target = click_target(assignment)
    print(
        f"\n{kind}s/{assignment}: Check my work {click_to_result:.2f} s (first click), "
        f"{second_click:.2f} s (second), target {target} s, load {load_at_click[0]:.2f}"
    )
    shot = screenshot(page, f"{kind}-{assignment}")
    TIMINGS[f"{kind}s/{assignment}"] = {
        "open_s": round(t_open - t0, 1),
        "open_phases": open_phases,
        "run_s": round(t_run - t_open, 1),
        "check_s": round(t_check - t_run, 1),
        "check_click_to_result_s": round(click_to_result, 2),
        "check_second_click_s": round(second_click, 2),
        "check_target_s": target,
        "load_average_at_first_click": [round(x, 2) for x in load_at_click],
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "code_cells": len(cells),
        "images": sum(c["images"] for c in cells),
        "widgets": sum(c["widgets"] for c in cells),
        "errors": [e for c in cells for e in c["errors"]],
        "screenshot": str(shot.relative_to(ROOT)),
        "check": check_text.strip().splitlines()[:1],
    }
    return cells, check_text


def _empty_outcome_cache() -> None:
    """Remove every entry of the outcome cache the kernels use (this process's
    DRILLS_CACHE_DIR, which the lab's kernels inherit); its folders stay, so a writer that
    is still running (an earlier kernel's warm-up) is not disturbed."""
    from autograder.scoring import cache

    root = cache.directory()
    for f in root.rglob("*") if root is not None and root.is_dir() else ():
        if f.is_file():
            f.unlink(missing_ok=True)


# -- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("assignment", [a for a in _notebooks("exercises") if browser_notebook(a)])
def test_exercise_shows_only_not_implemented_errors_and_renders_widgets(lab, page, assignment):
    """Does an unsolved notebook run in JupyterLab with no error but the stubs' NotImplementedError,
    its widgets and figures rendered, and "Check my work" reporting 0 points?"""
    rel = f"exercises/{assignment}/{assignment}.ipynb"
    cells, check_text = _open_run_check(
        page,
        lab,
        "exercise",
        assignment,
        lambda page, count, timeout_s: run_all_past_errors(page, lab, rel, count, timeout_s),
    )

    unexpected = [
        (i, c["first_line"], c["errors"])
        for i, c in enumerate(cells)
        if any(e != "NotImplementedError" for e in c["errors"])
    ]
    assert not unexpected, f"errors other than NotImplementedError: {unexpected}"
    # The checks tests/test_notebooks.py makes with nbclient, here on the notebook JupyterLab saved.
    saved = exercise_problems(nbformat.read(str(lab.root / rel), as_version=4))
    assert not saved, f"the saved notebook: {saved}"
    assert any(c["errors"] for c in cells), (
        "an unsolved notebook should raise NotImplementedError somewhere"
    )
    assert not _problems_with_rendering(cells), _problems_with_rendering(cells)
    assert not PAGE_ERRORS, f"uncaught errors in the page: {PAGE_ERRORS}"
    m = re.search(r"Score: ([\d.]+) / ([\d.]+) points", check_text)
    assert m, f"'Check my work' showed no score:\n{check_text}"
    assert float(m.group(1)) == 0 and float(m.group(2)) > 0, check_text
    assert "older than what you ran" not in check_text, check_text  # it ran what it saved


@pytest.mark.parametrize("assignment", [a for a in _notebooks("solutions") if browser_notebook(a)])
def test_solution_runs_clean_and_check_my_work_gives_full_marks(lab, page, assignment):
    """Does the solved notebook run all cells in JupyterLab without an error, with widgets and
    figures rendered, and does "Check my work" show full marks?"""
    rel = f"solutions/{assignment}/{assignment}.ipynb"
    sources = code_sources(lab.root / rel)
    cells, check_text = _open_run_check(page, lab, "solution", assignment, run_all_cells)
    TIMINGS[f"solutions/{assignment}"]["stderr_cells"] = [
        i for i, c in enumerate(cells) if c["stderr"]
    ]

    errors = [(i, c["first_line"], c["errors"]) for i, c in enumerate(cells) if c["errors"]]
    assert not errors, f"errors in the solved notebook: {errors}"
    # The checks tests/test_notebooks.py makes with nbclient, here on the notebook JupyterLab
    # saved: no error output, every hidden-test cell at full points and silent on stderr.
    saved = solution_problems(nbformat.read(str(lab.root / rel), as_version=4))
    assert not saved, f"the saved notebook: {saved}"
    assert not _problems_with_rendering(cells), _problems_with_rendering(cells)
    assert sum(c["images"] for c in cells) >= 1, "the solved notebook shows no figure"
    assert any(c["widgets"] for c, src in zip(cells, sources) if "check_my_work(" not in src), (
        "the solved notebook shows no exploration widget"
    )
    assert not PAGE_ERRORS, f"uncaught errors in the page: {PAGE_ERRORS}"
    m = re.search(r"Score: ([\d.]+) / ([\d.]+) points", check_text)
    assert m, f"'Check my work' showed no score:\n{check_text}"
    assert float(m.group(1)) == float(m.group(2)) > 0, f"not full marks:\n{check_text}"
    assert "older than what you ran" not in check_text, check_text  # it ran what it saved


def test_check_my_work_names_an_import_the_grader_does_not_run(lab, page):
    """Two names the kernel has and the grader's program lacks, in one notebook: forward_kl
    uses `statistics`, imported only in an exploration cell, and log_ratios calls
    `_check_distributions`, whose definition the saved file no longer holds (an exploration
    cell makes it with exec, as a kernel keeps a deleted cell's definition). In JupyterLab both
    self-checks pass. Do they say, above "passed", what the grader lacks, and does Check my
    work name each name, where it comes from and the fix, as `drills check` does?"""
    A = "01_exact_kl"
    if not browser_notebook(A):
        pytest.skip(f"{A} is not among the notebooks this session runs in the browser")
    nb = json.loads((lab.root / "solutions" / A / f"{A}.ipynb").read_text())

    def cell_of(gid):
        return next(
            c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == gid
        )

    def text(cell):
        return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]

    fkl = cell_of("forward_kl")
    before, doc, after = text(fkl).split('"""', 2)  # the call goes right after the docstring
    fkl["source"] = f'{before}"""{doc}"""\n    statistics.fmean([1.0]){after}'
    lr = cell_of("log_ratios")
    lines = text(lr).splitlines(keepends=True)
    helper = next(
        n for n in ast.parse(text(lr)).body if getattr(n, "name", "") == "_check_distributions"
    )
    old = "".join(lines[helper.lineno - 1 : helper.end_lineno])
    lr["source"] = "".join(lines[: helper.lineno - 1] + lines[helper.end_lineno :])
    at = nb["cells"].index(lr)
    nb["cells"].insert(
        at,
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": f"import statistics\nexec({old!r})  # a definition the saved file lacks"},
    )  # fmt: skip
    variant = lab.root / "variants" / A / f"{A}.ipynb"
    variant.parent.mkdir(parents=True)
    variant.write_text(json.dumps(nb))
    cells, check_text = _open_run_check(page, lab, "variant", A, run_all_cells)
    errors = [(i, c["first_line"], c["errors"]) for i, c in enumerate(cells) if c["errors"]]
    assert not errors, f"the kernel ran it without an error (its self-checks pass): {errors}"
    said = {
        "forward_kl": f"`statistics` is imported in cell {at + 1}, which is not graded",
        "log_ratios": "`_check_distributions` is defined in no cell of the saved notebook",
    }
    for function, cause in said.items():
        assert cause in check_text, check_text
        # the self-check in the kernel says it too, above its "passed"
        warned = [c["text"] for c in cells if f"{function}: self-check passed" in c["text"]]
        assert warned and "⚠" in warned[0] and cause in warned[0], (function, warned)
    assert "import it in your function's cell" in check_text, check_text
    assert "restart the kernel and run all cells" in check_text, check_text
    assert "NameError" in check_text, check_text  # the grade: both raise there
