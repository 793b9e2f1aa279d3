"""The replay attack on feedback, as a learner would mount it (used by test_feedback_replay.py).

1. Submit a first attempt whose graded functions return NaN: every case fails, so the
   feedback page lists every case, in case order.
2. Read the page: for each function, the value the page shows as *expected* for each
   case (parsed back from its text: numbers, short arrays, "raised ValueError").
3. Resubmit a notebook whose functions compute nothing: a call whose inputs are a
   fixed case's (public: they are in the notebook) returns that case's value; any other
   call is a generated case, and the k-th such call returns the k-th generated value read
   (or raises the error read). Graded again with the same secret and student id, the
   generated cases get the same inputs in the same order, so a value shown is a value that
   passes. Looking fixed cases up by their inputs keeps the replay in step whether the
   grader runs fixed and generated cases in one child or in separate ones (it separates
   them under a course secret).

:func:`values_from_results` reads the same table from results.json instead (exact
values): what a learner would replay if feedback showed them exactly.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
from class_fixture import exercise_with
from nbgrader_course import KEY_SRC, PLAY_SRC, _ns_of

from autograder import assignments
from autograder.cases import codec, seeds
from autograder.notebooks import reference
from autograder.scoring import evaluate

Table = dict[str, list[dict | None]]  # function -> outcome shown per case (None: nothing shown)

_NUMBER = r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)"


def _number(text: str) -> float | dict:
    x = float(text)
    return {"$float": text.lstrip("+")} if text.lstrip("+-") in ("nan", "inf") else x


def parse_rendered(text: str) -> dict | None:
    """An outcome back from its feedback text (compare.render_outcome), or None."""
    text = text.strip()
    m = re.match(r"^raised (\w+)", text)
    if m:
        return {"raised": m.group(1)}
    if re.fullmatch(_NUMBER, text):
        return {"value": _number(text)}
    m = re.fullmatch(r"\[(.*)\] \(shape \(([\d, ]*)\)\)", text)
    if m and "…" not in m.group(1):
        vals = [_number(v.strip()) for v in m.group(1).split(",") if v.strip()]
        shape = [int(d) for d in m.group(2).split(",") if d.strip()]
        return {"value": {"$array": vals, "shape": shape, "dtype": "float64"}}
    return None


class _Page(HTMLParser):
    """Collects, per function heading, the table rows' cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, list[list[str]]] = {}
        self._fn: str | None = None
        self._in_h2 = self._in_code = False
        self._cells: list[str] | None = None
        self._text = ""

    def handle_starttag(self, tag, attrs):
        if tag == "h2":
            self._in_h2, self._fn = True, None
        elif tag == "code" and self._in_h2 and self._fn is None:
            self._in_code, self._text = True, ""
        elif tag == "tr":
            self._cells = []
        elif tag in ("td", "th") and self._cells is not None:
            self._text = ""

    def handle_endtag(self, tag):
        if tag == "h2":
            self._in_h2 = False
        elif tag == "code" and self._in_code:
            self._fn, self._in_code = self._text, False
            self.rows[self._fn] = []
        elif tag in ("td", "th") and self._cells is not None:
            self._cells.append(self._text)
        elif tag == "tr" and self._cells is not None:
            if self._fn and self._cells and self._cells[0] != "check":
                self.rows[self._fn].append(self._cells)
            self._cells = None

    def handle_data(self, data):
        self._text += data


def values_from_page(page: str, assignment: str) -> Table:
    """What a feedback page shows as expected, per function, in case order."""
    p = _Page()
    p.feed(page)
    table: Table = {}
    for f in assignments.get(assignment).functions:
        shown = {row[0].split(" — ")[0]: parse_rendered(row[3]) for row in p.rows.get(f.name, [])}
        table[f.name] = [shown.get(c.id) for c in f.cases]
    return table


def values_from_results(item: dict) -> Table:
    """The exact expected outcome of every case, from a results.json(l) submission."""
    return {f["function"]: [c["expected"] for c in f["cases"]] for f in item["functions"]}


REPLAY_SRC = r"""
def {name}(*args, **kwargs):
    # No computation at all: a fixed case's value looked up by its (public) inputs; the k-th
    # other call returns what feedback showed for the k-th generated case.
    o = _DRILLS_FIXED_{name}.get(_drills_key([list(args), dict(kwargs)]), "miss")
    if o == "miss":
        k = _DRILLS_CALLS_{name}[0]
        _DRILLS_CALLS_{name}[0] = k + 1
        shown = _DRILLS_GENERATED_{name}
        o = shown[k] if k < len(shown) else None
    if o is None:
        return float("nan")
    if "raised" in o:
        import builtins as _b
        raise getattr(_b, o["raised"], ValueError)("replayed")
    return _drills_value(o["value"])
"""


def _split(assignment: str, function: str, shown: list) -> tuple[dict, list]:
    """``shown`` (one outcome per case, in case order) as {fixed inputs' key: outcome} and
    the generated cases' outcomes in order."""
    fspec = assignments.get(assignment).function(function)
    ns = reference.namespace(assignment)
    key = _ns_of(KEY_SRC)["_drills_key"]
    inputs = evaluate.materialize(assignment, fspec, seeds.course_secret(None), None)
    fixed, generated = {}, []
    for case, inp, o in zip(fspec.cases, inputs, shown):
        if case.hidden:
            generated.append(o)
        else:
            fixed[key([codec.decode(inp["args"], ns), codec.decode(inp["kwargs"], ns)])] = o
    return fixed, generated


def notebook_returning(assignment: str, table: Table | None) -> nbformat.NotebookNode:
    """The exercise with every graded function replaced: by NaN-returning stubs when
    ``table`` is None (the first attempt), else by a replay of ``table``."""

    def cell(names: list[str]) -> str:
        if table is None:
            return "\n\n".join(
                f"def {n}(*args, **kwargs):\n    return float('nan')\n" for n in names
            )
        source = "import json as _drills_json\n" + KEY_SRC + PLAY_SRC
        for n in names:
            fixed, generated = _split(assignment, n, table[n])
            source += (
                f"\n_DRILLS_FIXED_{n} = _drills_json.loads({json.dumps(json.dumps(fixed))})\n"
                f"_DRILLS_GENERATED_{n} = _drills_json.loads({json.dumps(json.dumps(generated))})\n"
                f"_DRILLS_CALLS_{n} = [0]\n" + REPLAY_SRC.replace("{name}", n)
            )
        return source

    return exercise_with(assignment, cell)


def write(nb: nbformat.NotebookNode, folder: Path, student: str, assignment: str) -> Path:
    path = folder / "submitted" / student / assignment / f"{assignment}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path
