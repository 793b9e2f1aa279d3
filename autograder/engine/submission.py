"""Submissions for `drills grade`: finding them, reading them safely, building the program to run.

Everything here runs in the trusted parent and never executes learner code.

- ``Submission``: one notebook to grade, its student and assignment (found by
  ``layout.discover`` from the command-line paths).
- ``load_notebook`` reads one notebook: no link followed, a size limit that holds
  for devices and pipes (``files.read_regular``), strict JSON (no NaN, no duplicate
  keys), validation against nbformat's v4 schema (``nbjson``).
- ``identify`` says which assignment a notebook is: ``--assignment``, then the
  folder layout, then the file name, then the nbgrader ``grade_id`` s it carries.
- ``build_program`` takes the *source* notebook's setup cells (trusted) and the
  learner's code cells whose ``grade_id`` is one of the source's solution cells.
  The learner's other cells are never run. A solution cell that is missing makes
  the functions it defines score 0 ("missing cell"). A ``grade_id`` that appears
  more than once (Jupyter copies metadata when a cell is duplicated) is run every
  time it appears, in notebook order, as the learner's kernel would: the last
  definition counts, and the result carries a warning.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.cases import codec, seeds
from autograder.engine import files, unbound
from autograder.notebooks import nbjson, notebook
from autograder.scoring import served, stubs

MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024


class SubmissionError(Exception):
    """The notebook cannot be graded at all (unreadable, not a notebook, unknown assignment)."""


@dataclass
class Submission:
    path: Path  # the notebook (or the folder where one was expected)
    student: str
    assignment: str | None  # None until identified
    timestamp: str = ""  # nbgrader's timestamp.txt beside the notebook, if any
    warnings: list[str] = field(default_factory=list)
    error: str | None = None  # set when the submission cannot be graded
    given_id: str = ""  # the student as the path names it, before safe_id (collision check)
    # the folder (or lone notebook) whose name gave the student id: two submissions of one id
    # and assignment from two origins are two people, never merged (engine.layout.discover)
    origin: Path | None = None
    # the student's whole folder could not be read (too deep, too many entries), so no notebook
    # in it was told apart: engine.layout gives that error to each assignment of the run
    whole_folder: bool = False


def safe_id(text: str) -> str:
    """A student or assignment id usable as a file name (and in a CSV cell); the same
    normalisation the in-kernel engine applies to its student id (seeds.student_id)."""
    return seeds.student_id(text)


# -- reading a notebook ------------------------------------------------------------------------


def _no_duplicate_keys(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise SubmissionError(f"the notebook's JSON has a duplicated key {k!r}")
        d[k] = v
    return d


def _no_constants(name):
    raise SubmissionError(f"the notebook's JSON contains {name}, which is not valid JSON")


def _whole_number(text: str) -> int:
    """A JSON integer; one longer than Python converts (4,300 digits) is a clear error."""
    digits = len(text.lstrip("-"))
    if digits > 4300:
        raise SubmissionError(
            f"the notebook's JSON holds a whole number of {digits} digits (Jupyter writes "
            "none longer than a few digits): re-download the notebook, or copy your code "
            "into a fresh copy of it"
        )
    return int(text)


def _version_problem(name: str, data: dict) -> str | None:
    """What to do about a notebook that is not nbformat 4, in a learner's terms."""
    v = data.get("nbformat")
    if v == 4 and type(v) is int:
        return None
    if type(v) is int and 1 <= v <= 3:
        return (
            f"{name} is an nbformat {v} notebook, an older Jupyter format; version 4 is "
            "needed: open it in Jupyter and save it (Jupyter converts it), or run "
            f"`jupyter nbconvert --to notebook --nbformat 4 {name}` (it writes a converted "
            "copy beside it, ending in .nbconvert.ipynb)"
        )
    if type(v) is int and v > 4:
        return (
            f"{name} says it is nbformat {v}, a version no Jupyter writes (the current "
            "format is 4): it was changed by hand or by another tool; re-download the "
            "notebook, or copy your code into a fresh copy of it"
        )
    if "nbformat" not in data:
        if isinstance(data.get("cells"), list):
            return (
                f'{name} has no "nbformat" field (a notebook saved by Jupyter has '
                '"nbformat": 4): re-download the notebook, or copy your code into a fresh copy'
            )
        return f"{name} is JSON but not a notebook (no nbformat version, no list of cells)"
    return (
        f'{name}\'s "nbformat" is {nbjson.json_type(v)} ({str(v)[:20]!s}); it must be the '
        "number 4: re-download the notebook, or copy your code into a fresh copy of it"
    )


def load_notebook(path: Path, max_bytes: int = MAX_NOTEBOOK_BYTES):
    """The notebook at ``path`` as :class:`nbjson.Node` s, or SubmissionError saying why not."""
    try:
        # no link followed, no device or pipe read, never more than max_bytes (files.py)
        raw = files.read_regular(path, max_bytes)
    except files.Refused as e:
        raise SubmissionError(str(e)) from None
    try:
        # utf-8-sig: a byte-order mark that an editor put in front is not an error
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SubmissionError(
            f"{path.name} is not UTF-8 text (byte {e.start} cannot be read): save it again "
            "from Jupyter, or copy your code into a fresh copy of the notebook"
        ) from None
    try:
        data = json.loads(
            text,
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_no_constants,
            parse_int=_whole_number,
        )
    except json.JSONDecodeError as e:
        raise SubmissionError(
            f"{path.name} is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})"
        ) from None
    except RecursionError:
        raise SubmissionError(f"{path.name}: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise SubmissionError(
            f"{path.name} is JSON but not a notebook (it is {nbjson.json_type(data)}, "
            "not an object with a list of cells)"
        )
    version_problem = _version_problem(path.name, data)
    if version_problem:
        raise SubmissionError(version_problem)
    if not isinstance(data.get("cells"), list):
        raise SubmissionError(f"{path.name} is JSON but not a notebook (no list of cells)")
    try:
        nbjson.validate(data)
        return nbjson.node(data)  # recursive too: metadata the schema leaves open may nest deep
    except nbjson.NotebookInvalid as e:
        raise SubmissionError(f"{path.name} is not a valid notebook: {e}") from None
    except RecursionError:
        raise SubmissionError(f"{path.name}: JSON nested too deeply") from None


# -- which assignment --------------------------------------------------------------------------


def _grade_ids(nb) -> set[str]:
    return {
        str(notebook.nbgrader_meta(c).get("grade_id"))
        for c in nb.cells
        if notebook.nbgrader_meta(c).get("grade_id")
    }


def identify(sub: Submission, nb, sources: dict[str, set[str]]) -> str | None:
    """The assignment of ``sub``: already known from the command line or the path, else
    the source notebook whose solution grade_ids the notebook carries most of."""
    if sub.assignment:
        return sub.assignment
    if sub.path.stem in sources:
        return sub.path.stem
    ids = _grade_ids(nb)
    scored = sorted(((len(ids & s), a) for a, s in sources.items() if ids & s), reverse=True)
    if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0]):
        return None
    return scored[0][1]


def solution_ids(source_nb) -> set[str]:
    return {gid for role, gid, _ in notebook.code_cells(source_nb, {"solution"}) if gid}


# -- the program -------------------------------------------------------------------------------


@dataclass
class Program:
    """What the child runs: trusted setup cells, then the learner's solution cells."""

    assignment: str
    setup: list[tuple[str, str]]  # (grade_id, source) from the source notebook
    cells: list[tuple[str, str]]  # (grade_id, source) from the learner's notebook, notebook order
    functions: list[str]  # graded functions, spec order
    missing: dict[str, str] = field(default_factory=dict)  # function -> why it cannot be run
    defined_in: dict[str, str] = field(
        default_factory=dict
    )  # function -> grade_id of its source cell
    warnings: list[str] = field(default_factory=list)
    # index in ``cells`` -> why that cell does not compile (syntax_problem), said in full
    syntax: dict[int, str] = field(default_factory=dict)
    # graded function -> the sentence naming the helpers it calls that are still stubs
    stub_notes: dict[str, str] = field(default_factory=dict)
    # graded function -> the sentence naming the helpers it calls whose definition does not compile
    broken_notes: dict[str, str] = field(default_factory=dict)
    # definition -> why it does not compile (its cell's other definitions still ran)
    uncompiled: dict[str, str] = field(default_factory=dict)
    # graded function -> where a slip in a helper it was served the reference of was charged
    served_notes: dict[str, str] = field(default_factory=dict)
    # graded function -> the helpers of its cell that are broken, charged to it once
    charged_notes: dict[str, str] = field(default_factory=dict)
    # index in ``cells`` -> why that cell was not read at all (over MAX_CELL_CHARS, or past
    # MAX_GRADED_CHARS of graded cells): it runs nothing
    too_large: dict[int, str] = field(default_factory=dict)
    # graded function -> the sentence naming the globals it uses that the program lacks
    unbound_notes: dict[str, str] = field(default_factory=dict)
    # graded function -> the callees its cases serve by value in this submission (see
    # scoring.served.restrict): its graded callees, and the helpers left unusable
    served: dict[str, list[str]] = field(default_factory=dict)


def _top_level_defs(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {
        n.name
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _lone_surrogate(source: str) -> tuple[int, str] | None:
    """(line, escape) of the first lone surrogate in ``source`` (a JSON ``"\\ud800"``
    escape decodes to one; no UTF-8 file can hold it), or None."""
    m = codec.LONE_SURROGATE.search(source)
    if m is None:
        return None
    return source.count("\n", 0, m.start()) + 1, f"\\u{ord(m.group()):04x}"


# Characters that look like a space, a quote or a minus (or like nothing) but are not the
# ASCII one Python needs: pasted from a web page, a PDF or a chat, they make a line that
# reads right fail to compile.
LOOKALIKES = {
    "\u00a0": ("a non-breaking space", "type a plain space instead"),
    "\u2002": ("an en space", "type a plain space instead"),
    "\u2003": ("an em space", "type a plain space instead"),
    "\u2009": ("a thin space", "type a plain space instead"),
    "\u202f": ("a narrow non-breaking space", "type a plain space instead"),
    "\u3000": ("an ideographic space", "type a plain space instead"),
    "\u200b": ("a zero-width space", "delete it"),
    "\u200c": ("a zero-width non-joiner", "delete it"),
    "\u200d": ("a zero-width joiner", "delete it"),
    "\u2060": ("a word joiner", "delete it"),
    "\ufeff": ("a zero-width no-break space (byte-order mark)", "delete it"),
    "\u2018": ("a curly opening quote ‘", "type a straight quote ' instead"),
    "\u2019": ("a curly closing quote ’", "type a straight quote ' instead"),
    "\u201c": ("a curly opening double quote “", 'type a straight double quote " instead'),
    "\u201d": ("a curly closing double quote ”", 'type a straight double quote " instead'),
    "\u2212": ("a minus sign −", "type a hyphen-minus - instead"),
    "\u2013": ("an en dash –", "type a hyphen-minus - instead"),
    "\u00d7": ("a multiplication sign ×", "type * instead"),
}
MAX_LOOKALIKES = 3


def lookalikes(source: str) -> list[str]:
    """Where ``source`` holds a character of LOOKALIKES, as "line L, column C: a non-breaking
    space (U+00A0): type a plain space instead" (the first MAX_LOOKALIKES, then how many more)."""
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        for col, ch in enumerate(line, 1):
            if ch in LOOKALIKES:
                what, instead = LOOKALIKES[ch]
                found.append(f"line {number}, column {col}: {what} (U+{ord(ch):04X}): {instead}")
    if len(found) > MAX_LOOKALIKES:
        found = found[:MAX_LOOKALIKES] + [f"and {len(found) - MAX_LOOKALIKES} more"]
    return found


def syntax_problem(source: str, gid: str, number: int) -> str | None:
    """:func:`_syntax_problem`, remembered for cells of at most 20,000 characters (a class
    hands in the same short cells many times; a long one is not kept in memory)."""
    if len(source) > 20_000:
        return _syntax_problem.__wrapped__(source, gid, number)
    return _syntax_problem(source, gid, number)


@functools.lru_cache(maxsize=512)
def _syntax_problem(source: str, gid: str, number: int) -> str | None:
    """Why the learner's cell ``gid`` (cell ``number`` of the notebook) does not compile, with
    the line, the column, the line itself, and every look-alike character it holds (a
    non-breaking space, a zero-width space, a curly quote: see LOOKALIKES); None when it
    compiles. Compiling runs nothing; the answer is kept per text (a class hands in the same
    cells many times: the released stubs, the same solution)."""
    try:
        compile(source, f"<cell:{gid}>", "exec", dont_inherit=True)
        return None
    except SyntaxError as e:
        err = e
    except (ValueError, OverflowError, MemoryError, RecursionError) as e:
        return f"SyntaxError in your cell {gid!r} (cell {number} of the notebook): {e}"
    where = f"line {err.lineno}" if err.lineno else "somewhere"
    if err.lineno and err.offset:
        where += f", column {err.offset}"
    text = (
        f"{type(err).__name__} in your cell {gid!r} (cell {number} of the notebook), "
        f"{where}: {err.msg}"
    )
    lines = source.splitlines()
    if err.lineno and 1 <= err.lineno <= len(lines):
        line = lines[err.lineno - 1]
        text += "\n    " + line.rstrip()[:200]
        if err.offset and 1 <= err.offset <= len(line) + 1 and err.offset <= 200:
            text += "\n    " + " " * (err.offset - 1) + "^"
    found = lookalikes(source)
    if found:
        text += (
            "\nThis cell holds characters that look like ordinary ones but are not what "
            "Python reads (pasted text brings them; in a string or a comment they do no "
            "harm): " + "; ".join(found) + "."
        )
    return text


_CONTINUATION = re.compile(r"(else|elif|except|finally)\b|[)\]}]")
# Bounds on the work of splitting a cell (the parent compiles pieces of learner text): a cell
# longer, or with more top-level statements, is one run that does not compile, as before
# splitting existed; a run is looked for up to SPLIT_LOOKAHEAD starts ahead.
SPLIT_MAX_CHARS = 100_000
SPLIT_MAX_STARTS = 200
SPLIT_LOOKAHEAD = 8


def _compiles(source: str) -> bool:
    try:
        compile(source, "<chunk>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
        return False


def split_definitions(source: str) -> list[tuple[int, int, bool]]:
    """A cell that does not compile, cut into runs of top-level statements: ``(first line,
    end line, compiles)`` (0-based, end excluded), covering every line in order.

    A run starts at a line of column 0 (not blank, not a comment, not a closing bracket or an
    ``else``/``except`` of the statement above, not a ``def`` under its decorators); each run is
    the shortest that compiles from its start. A start from which nothing compiles is a run
    that does not compile, up to the next start: so a slip in one definition leaves the
    definitions beside it whole. Compiling runs nothing."""
    lines = source.splitlines(keepends=True)
    starts = []
    for i, line in enumerate(lines):
        if not line.strip() or line[0] in " \t#" or _CONTINUATION.match(line):
            continue
        if starts and starts[-1] == i - 1 and lines[i - 1].startswith("@"):
            continue  # a def under its decorator starts with the decorator
        starts.append(i)
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    if len(source) > SPLIT_MAX_CHARS or len(starts) > SPLIT_MAX_STARTS:
        return [(0, len(lines), False)]
    bounds = starts + [len(lines)]
    runs: list[tuple[int, int, bool]] = []
    k = 0
    while k < len(starts):
        first = bounds[k]
        end = next(
            (
                j
                for j in range(k + 1, min(len(bounds), k + 1 + SPLIT_LOOKAHEAD))
                if _compiles("".join(lines[first : bounds[j]]))
            ),
            None,
        )
        if end is None:
            runs.append((first, bounds[k + 1], False))
            k += 1
        else:
            runs.append((first, bounds[end], True))
            k = end
    return runs


def _defs_in(text: str) -> list[str]:
    return re.findall(r"^(?:async\s+)?(?:def|class)\s+(\w+)", text, re.M)


def compilable_part(source: str, gid: str, number: int) -> tuple[str, dict[str, str], str]:
    """For a cell that does not compile: ``(what of it compiles, {definition: why it does not
    compile}, the cell's problem said in full)``. The part that compiles keeps every line
    where it was (the rest becomes blank lines), so errors name the learner's own lines."""
    lines = source.splitlines(keepends=True)
    kept: list[str] = []
    broken: dict[str, str] = {}
    problems: list[str] = []
    for first, end, ok in split_definitions(source):
        text = "".join(lines[first:end])
        if ok:
            kept.append(text)
            continue
        kept.append("\n" * (end - first))
        names = _defs_in(text)
        padded = "\n" * first + text
        why = syntax_problem(padded, gid, number) or f"line {first + 1} does not compile"
        for name in names:
            broken[name] = why
        problems.append(
            (
                "the definition of " + " and ".join(f"`{n}`" for n in names)
                if names
                else f"lines {first + 1}-{end}"
            )
            + " does not compile, so the grader left it out and graded the rest of the cell"
            + " without it (Jupyter runs none of a cell that does not compile): "
            + why
        )
    part = "".join(kept)
    if not _compiles(part):  # never expected: every run compiles alone
        whole = syntax_problem(source, gid, number) or "the cell does not compile"
        return "", {n: whole for n in _defs_in(source)}, whole
    return part, broken, "\n".join(problems)


# How much learner code the grader reads. It parses and compiles each graded cell itself (to
# find definitions, stubs and slips), and a Python parse holds up to about 0.5 KB of memory
# per character of source (a list literal of small numbers is the worst case): 200,000
# characters keep one parse near 100 MB whatever a notebook holds. A solution cell is a few
# thousand characters; a cell over the limit holds data, which belongs in a file.
MAX_CELL_CHARS = 200_000
MAX_GRADED_CHARS = 1_000_000  # all graded cells of a notebook together, copies included


_IMPORTS_TINY_MODEL = re.compile(r"^\s*(?:from|import)\s+tiny_model\b", re.M)


def _too_large(source: str, read: int) -> str:
    if len(source) > MAX_CELL_CHARS:
        return (
            f"it holds {len(source):,} characters of code, and the grader reads at most "
            f"{MAX_CELL_CHARS:,} in one cell (a solution takes a few thousand): data pasted "
            "into the cell belongs in a file or in a cell of your own, outside the graded ones"
        )
    return (
        f"with it, the graded cells would hold {read + len(source):,} characters of code, "
        f"and the grader reads at most {MAX_GRADED_CHARS:,} over all of them (copies of a "
        "cell included): delete the copies and the pasted data"
    )


def build_program(assignment: str, source_nb, learner_nb, functions: list[str]) -> Program:
    setup = [(gid, src) for _, gid, src in notebook.code_cells(source_nb, {"setup"})]
    sol = [(gid, src) for _, gid, src in notebook.code_cells(source_nb, {"solution"})]
    sol_ids = [gid for gid, _ in sol]
    defined_in: dict[str, str] = {}
    for f in functions:
        if f in sol_ids:
            defined_in[f] = f
            continue
        for gid, src in sol:
            if f in _top_level_defs(src):
                defined_in[f] = gid
                break
    prog = Program(assignment, setup, [], list(functions), defined_in=defined_in)
    counts: dict[str, int] = {}
    read = 0  # characters of graded cells so far
    ungraded: list[tuple[int, str]] = []  # (number, source) of code cells the grader does not run
    for number, cell in enumerate(learner_nb.cells, 1):
        problem = notebook.nbgrader_meta_problem(cell, number)
        if problem:
            prog.warnings.append(problem)
        gid = str(notebook.nbgrader_meta(cell).get("grade_id", ""))
        if gid not in sol_ids:
            if cell.get("cell_type") == "code":
                ungraded.append((number, _source(cell)))
            continue
        if cell.get("cell_type") != "code":
            prog.warnings.append(f"cell {gid!r} is no longer a code cell; it was not run")
            continue
        if not notebook.nbgrader_meta(cell).get("solution"):
            prog.warnings.append(
                f"cell {gid!r} is no longer marked as a solution cell; it was run anyway"
            )
        counts[gid] = counts.get(gid, 0) + 1
        source = _source(cell)
        if len(source) > MAX_CELL_CHARS or read + len(source) > MAX_GRADED_CHARS:
            # Read no further: parsing is the grader's own work, and a list literal costs
            # about 0.5 GB of its memory per MB of text. The cell's functions score 0 and say why.
            why = _too_large(source, read)
            prog.warnings.append(f"cell {number} ({gid!r}) was not run: {why}")
            prog.too_large[len(prog.cells)] = why
            prog.cells.append((gid, ""))
            continue
        read += len(source)
        if _IMPORTS_TINY_MODEL.search(source):
            prog.warnings.append(
                f"cell {number} ({gid!r}) imports tiny_model, which the grader's program does "
                "not have (its training code implements the graded functions): write the "
                "function with math, numpy and torch, as the notebook asks"
            )
        bad = _lone_surrogate(source)
        if bad is not None:
            # Not text: the learner's kernel could not run this cell either, and no UTF-8
            # writer can take it. The cell fails with the reason, as in the kernel.
            why = (
                f"line {bad[0]} holds a lone surrogate ({bad[1]}), half of a character pair "
                "that is not text Python can run: delete that character and save again"
            )
            prog.warnings.append(f"cell {number} ({gid!r}): {why}")
            source = f"raise SyntaxError({why!r})\n"
        else:
            problem = syntax_problem(source, gid, number)
            if problem is not None:
                # one slip, one charge: the definitions that compile run, the one that does
                # not is left out and named
                part, broken_defs, said = compilable_part(source, gid, number)
                prog.syntax[len(prog.cells)] = said or problem
                if broken_defs:  # said here: the functions that pay name it, "reported for it"
                    prog.warnings.append(said)
                for name, why in broken_defs.items():
                    prog.uncompiled[name] = why
                source = part
        prog.cells.append((gid, source))
    # each cell parsed once: the functions it defines, and so the last definition of each
    # name (as in a kernel that ran the cells in order) and the cell that gave it
    defs: dict[str, ast.AST] = {}
    where: dict[str, str] = {}
    for gid, src in prog.cells:
        for name, node in stubs.top_level_functions([src]).items():
            defs[name] = node
            where[name] = gid
    # Callees served by value (scoring.served): every graded callee, and a helper the learner
    # left unusable (a stub, deleted, or a definition that does not compile), which is then
    # charged once, to the function of the cell the notebook gives it in. A helper the learner
    # wrote is their code for every function that calls it.
    candidates = {f: set(served.served_names(assignment, f, graded=functions)) for f in functions}
    owners = served.owner_cells(assignment)
    broken = {n: why for n, why in prog.uncompiled.items() if n not in defs}

    def calls(f: str, name: str) -> bool:
        if f not in defs:
            return False
        own_defs = {k: v for k, v in defs.items() if k == f or k not in candidates[f] - {name}}
        return name in stubs.names_reached(own_defs, f)

    # functions graded in another notebook (04's copy of 03's mean_sampled_log_ratio): always
    # served, never charged here
    provided = served.provided_names(assignment)
    served_helpers: dict[str, tuple[str, str | None]] = {}  # helper -> (why, owner charged)
    for name in [n for n in owners if n not in functions and n not in provided]:
        if name in broken:
            why = "does not compile"
        elif name not in defs:
            why = "is not defined"
        elif stubs.is_stub(defs[name]):
            why = "still raises NotImplementedError"
        else:
            continue
        owner = next((f for f in functions if owners.get(f) == owners.get(name)), None)
        if owner is not None and owner in defs and not calls(owner, name):
            continue  # its function does without it: it is charged to every caller, as written
        served_helpers[name] = (why, owner if owner is not None and owner in defs else None)
    serve = {
        f: {n for n in candidates[f] if n in functions or n in served_helpers or n in provided}
        for f in functions
    }
    prog.served = {f: sorted(names) for f, names in serve.items()}
    # names the learner's kernel has and the grader's program does not (an exploration
    # cell's import, a deleted helper): said with where they come from, before a NameError
    lacking = unbound.missing_names(
        [src for _, src in setup], [src for _, src in prog.cells], functions, serve
    )
    for f, names in lacking.items():
        # a helper whose definition does not compile is in a cell: its own line says so
        # (broken_notes), never "defined in no cell of the saved notebook"
        unknown = [n for n in names if n not in broken]
        if unknown:
            prog.unbound_notes[f] = unbound.note(f, unknown, ungraded)
    for f in functions:
        own_defs = {k: v for k, v in defs.items() if k == f or k not in serve[f]}
        helpers = stubs.stub_callees(own_defs, f)
        if helpers:
            prog.stub_notes[f] = stubs.stub_text(
                f, helpers, {h: where[h] for h in helpers if where.get(h) != where.get(f)}
            )
    # helpers a cell that does not compile meant to define: a function elsewhere that calls
    # one raises NameError, and the cause is that definition
    for f in functions:
        if f not in defs:
            continue
        reached = stubs.names_reached(
            {k: v for k, v in defs.items() if k == f or k not in serve[f]}, f
        )
        lost = [n for n in reached if n in broken and n not in serve[f]]
        if lost:
            prog.broken_notes[f] = stubs.broken_text(f, lost)
    # where each served helper's slip is charged: said at the function that pays it and at
    # those served the reference in its place (a graded callee is charged at its own cases,
    # and its callers say so in their note)
    for name, (why, owner) in served_helpers.items():
        others = [f for f in functions if name in serve[f] and calls(f, name)]
        if owner is None and not others:
            continue
        text = served.charged_text(name, why, owner, others)
        for f in others:
            prog.served_notes[f] = (prog.served_notes.get(f, "") + " " + text).strip()
        if owner is not None:
            prog.charged_notes[owner] = (prog.charged_notes.get(owner, "") + " " + text).strip()
    for gid, n in counts.items():
        if n > 1:
            prog.warnings.append(
                f"the solution cell {gid!r} appears {n} times (a copied cell keeps its grade_id); "
                "all copies were run in notebook order, so the last definition counts"
            )
    for gid in sol_ids:
        if gid not in counts:
            prog.warnings.append(f"the solution cell {gid!r} is missing from the notebook")
            for f, where in defined_in.items():
                if where == gid:
                    prog.missing[f] = (
                        f"missing cell: the solution cell {gid!r} is not in the notebook "
                        "(deleted, or its metadata was changed)"
                    )
    return prog
