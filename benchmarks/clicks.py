"""Check my work, from the setup cells to the first click's result, in a real kernel, on a busy machine.

    python benchmarks/clicks.py [--assignments 05_grpo_lld ...] [--loads 0 4 8]
                                [--after 0 10 40] [--no-baseline]

What a learner meets in JupyterLab, without the browser: for each notebook, each load and
each wait, a new IPython kernel (as JupyterLab starts one: ``JPY_SESSION_NAME`` names the
notebook, the working folder is the notebook's, the outcome cache is new and empty) runs the
solution notebook's setup cells (every code cell up to the one that makes its ``SelfCheck``;
the first of them starts the check server, widgets.warm_up), then waits ``--after`` seconds
(the learner's time between the setup cells and the click), then clicks twice: the widget's
own call (widgets.ask_server) on the saved notebook, timed inside the kernel.

``--loads``: the number of busy processes (a Python loop each) started beside the kernel for
that block of runs; a load of 4 on a 2-core machine is two spinners per core, what a lab
server with other learners' kernels or a laptop running a training job looks like. The
1-minute load average at each click is printed beside the figures.

Every row also has ``drills check`` in a new process with an empty cache at the same load (a
click without a check server: the path every click took before it); no click may be slower
than that. Every answer of the server is compared with what that ``drills check --json`` says
(the seconds each case took aside): a fast answer that differs is reported as a failure and
the script exits 1.

Targets (docs/speed.md): 1 s for 01-04, 2.5 s for the notebooks whose grading imports torch
(the assignment registry says which: assignments.uses_torch), on 2 cores at a load of 4.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder import assignments, widgets  # noqa: E402
from autograder.notebooks import notebook  # noqa: E402

SPIN = "while True:\n    pass\n"

# Run inside the kernel after the setup cells: two clicks, each the widget's own call, timed.
CLICKS = """
import json as _json, time as _time
from pathlib import Path as _Path
from autograder import widgets as _widgets
_times, _reports, _errors = [], [], []
for _ in range(2):
    _t0 = _time.perf_counter()
    _o = _widgets.ask_server({assignment!r}, _Path({path!r}))
    _times.append(_time.perf_counter() - _t0)
    _reports.append(None if _o is None else _o.report)
    _errors.append("no server" if _o is None else f"{{_o.error}} {{_o.detail}}")
print("CLICKS " + _json.dumps({{"times": _times, "reports": _reports, "errors": _errors}}))
"""


def target(assignment: str) -> float:
    """2.5 s for a notebook whose grading imports torch (the assignment registry says which),
    1.0 s for the NumPy notebooks."""
    return 2.5 if assignments.uses_torch(assignment) else 1.0


def setup_cells(path: Path) -> list[str]:
    """The code cells a learner runs before anything else: up to and including the one that
    makes the notebook's SelfCheck (which every notebook has)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for c in nb["cells"]:
        if c["cell_type"] != "code":
            continue
        src = "".join(c["source"])
        cells.append(src)
        if "SelfCheck(" in src:
            return cells
    raise SystemExit(f"{path.name}: no cell makes a SelfCheck")


def learners_copy(assignment: str, work: Path) -> Path:
    """The notebook a learner would click on: the solution notebook, each solution cell with a
    line of its own added (so no byte of it is the source notebook's, as in a learner's file),
    saved in ``work``."""
    raw = json.loads(notebook.source_path(assignment).read_text(encoding="utf-8"))
    for c in raw["cells"]:
        if c.get("metadata", {}).get("nbgrader", {}).get("solution"):
            c["source"] = "".join(c["source"]) + "\n# my own solution\n"
    path = work / f"{assignment}.ipynb"
    path.write_text(json.dumps(raw, indent=1), encoding="utf-8")
    return path


def _without_times(x):
    if isinstance(x, dict):
        return {k: _without_times(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [_without_times(v) for v in x]
    return x


def _load() -> float:
    return os.getloadavg()[0]


class Kernel:
    """One IPython kernel, started as JupyterLab starts a notebook's."""

    def __init__(self, notebook_path: Path, cache_dir: Path) -> None:
        from jupyter_client.manager import KernelManager

        env = dict(os.environ)
        env.pop("DRILLS_WARM_CACHE", None)
        env.update(JPY_SESSION_NAME=str(notebook_path), DRILLS_CACHE_DIR=str(cache_dir))
        self.km = KernelManager(kernel_name="python3")
        # the kernel's own stderr (its warning that it listens on local TCP) goes to a file
        self.log = open(notebook_path.parent / "kernel.log", "wb")  # noqa: SIM115
        self.km.start_kernel(env=env, cwd=str(notebook_path.parent), stderr=self.log)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=300)

    def run(self, code: str, timeout: float = 600) -> str:
        """Execute ``code``; its stdout. An error in the cell is raised here."""
        out, error = [], None
        msg_id = self.kc.execute(code)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SystemExit(f"a cell did not finish within {timeout:g} s:\n{code[:200]}")
            msg = self.kc.get_iopub_msg(timeout=left)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream" and content["name"] == "stdout":
                out.append(content["text"])
            elif kind == "error":
                error = f"{content['ename']}: {content['evalue']}"
            elif kind == "status" and content["execution_state"] == "idle":
                break
        if error:
            raise SystemExit(f"a cell raised {error}:\n{code[:200]}")
        return "".join(out)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=False)
        self.log.close()


def one_run(assignment: str, after: float, work: Path) -> dict:
    """Setup cells, ``after`` seconds, two clicks; seconds of each, and the first report."""
    path = learners_copy(assignment, work)
    cache_dir = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
    kernel = Kernel(path, cache_dir)
    try:
        t0 = time.perf_counter()
        for src in setup_cells(path):
            kernel.run(src)
        setup_s = time.perf_counter() - t0
        time.sleep(after)  # the learner's time between the setup cells and the click
        load = _load()
        out = kernel.run(CLICKS.format(assignment=assignment, path=str(path)))
    finally:
        kernel.close()
    line = next(x for x in out.splitlines() if x.startswith("CLICKS "))
    clicks = json.loads(line[len("CLICKS ") :])
    reports = clicks["reports"]
    if reports[0] is None:
        raise SystemExit(f"{assignment}: the check server gave no report: {clicks['errors'][0]}")
    if _without_times(reports[0]) != _without_times(reports[1]):
        raise SystemExit(f"{assignment}: the second click reported otherwise than the first")
    first, second = clicks["times"]
    return {"setup": setup_s, "first": first, "second": second, "load": load, "report": reports[0]}


def fresh_check(assignment: str, work: Path) -> tuple[float, dict]:
    """A click without a server: ``drills check --json`` in a new process, empty cache."""
    path = learners_copy(assignment, work)
    os.environ["DRILLS_CACHE_DIR"] = tempfile.mkdtemp(prefix="cache-", dir=work)
    os.environ["DRILLS_WARM_CACHE"] = "off"
    try:
        t0 = time.perf_counter()
        outcome = widgets.run_check(path)
        seconds = time.perf_counter() - t0
    finally:
        os.environ.pop("DRILLS_WARM_CACHE")
    if outcome.report is None:
        raise SystemExit(f"{assignment}: drills check gave no report ({outcome.error})")
    return seconds, outcome.report


def spinners(n: int) -> list[subprocess.Popen]:
    """``n`` busy processes, each in a session of its own: Linux's autogroup scheduling
    (on by default) shares a core fairly between sessions, not processes, so spinners in
    this script's session would weigh as one other program, not ``n``."""
    return [
        subprocess.Popen([sys.executable, "-c", SPIN], start_new_session=True) for _ in range(n)
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assignments", nargs="*", default=None)
    ap.add_argument("--loads", nargs="*", type=int, default=[0, 4, 8])
    ap.add_argument("--after", nargs="*", type=float, default=[0.0, 10.0, 40.0])
    ap.add_argument("--no-baseline", action="store_true", help="skip the fresh drills check")
    args = ap.parse_args()
    names = args.assignments or notebook.available_assignments()
    print(f"{os.cpu_count()} CPUs; seconds; a click's ratio to its target in brackets")
    head = ["notebook", "spinners", "setup cells"]
    head += [f"first click {a:g} s after" for a in args.after]
    head += ["second click (max)", "fresh drills check", "target", "load at clicks"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    failures = []
    with tempfile.TemporaryDirectory(prefix="drills-clicks-") as tmp:
        for n in args.loads:
            spin = spinners(n)
            try:
                for a in names:
                    goal = target(a)
                    runs = [
                        one_run(a, after, Path(tempfile.mkdtemp(dir=tmp))) for after in args.after
                    ]
                    cells = [a, str(n), "/".join(f"{r['setup']:.1f}" for r in runs)]
                    cells += [f"{r['first']:.2f} ({r['first'] / goal:.1f}x)" for r in runs]
                    cells.append(f"{max(r['second'] for r in runs):.2f}")
                    if args.no_baseline:
                        cells.append("")
                    else:
                        fresh, report = fresh_check(a, Path(tempfile.mkdtemp(dir=tmp)))
                        cells.append(f"{fresh:.2f}")
                        for r in runs:
                            if _without_times(r["report"]) != _without_times(report):
                                failures.append(
                                    f"{a}: the server's report differs from drills check's"
                                )
                        slower = [r["first"] for r in runs if r["first"] > fresh]
                        if slower:
                            cells[-1] += f" (slower click: {max(slower):.2f})"
                    cells.append(f"{goal:g}")
                    cells.append("/".join(f"{r['load']:.1f}" for r in runs))
                    print("| " + " | ".join(cells) + " |", flush=True)
            finally:
                for p in spin:
                    p.kill()
                    p.wait()
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
