"""Does our notebook validation (no nbformat import) accept and refuse exactly what nbformat does?"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.notebooks import nbjson

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"
SOLUTION = json.loads((CORPUS / "solution.ipynb").read_text())
# corpus fixtures that are not JSON Python can read (cut in half; a 5000-digit number)
UNREADABLE = {"broken_json", "huge_int_in_json"}


def _nbformat_accepts(data) -> bool:
    import nbformat

    try:
        nbformat.validate(nbformat.from_dict(copy.deepcopy(data)))
    except Exception:  # noqa: BLE001 (any refusal counts)
        return False
    return True


def _ours_accepts(data) -> bool:
    try:
        nbjson.validate(copy.deepcopy(data))
    except nbjson.NotebookInvalid:
        return False
    return True


def _edit(fn):
    nb = copy.deepcopy(SOLUTION)
    fn(nb)
    return nb


def _code(nb):
    return next(c for c in nb["cells"] if c["cell_type"] == "code")


EDITS = {
    "untouched": lambda nb: None,
    "code cell without source": lambda nb: _code(nb).pop("source"),
    "code cell without outputs": lambda nb: _code(nb).pop("outputs"),
    "code cell without execution_count": lambda nb: _code(nb).pop("execution_count"),
    "execution_count as text": lambda nb: _code(nb).update(execution_count="3"),
    "execution_count true": lambda nb: _code(nb).update(execution_count=True),
    "source as a number": lambda nb: _code(nb).update(source=3),
    "source as a list of lines": lambda nb: _code(nb).update(source=["a = 1\n", "b = 2"]),
    "unknown cell type": lambda nb: _code(nb).update(cell_type="python"),
    "unknown key in a cell": lambda nb: _code(nb).update(extra=1),
    "cell metadata not an object": lambda nb: _code(nb).update(metadata=[]),
    "nbgrader metadata of any shape": lambda nb: _code(nb)["metadata"].update(nbgrader=[1]),
    "cell without an id": lambda nb: _code(nb).pop("id"),
    "two cells with one id": lambda nb: nb["cells"][1].update(id=nb["cells"][0]["id"]),
    "id with a space": lambda nb: _code(nb).update(id="a b"),
    "empty id": lambda nb: _code(nb).update(id=""),
    "id of 65 characters": lambda nb: _code(nb).update(id="x" * 65),
    "no notebook metadata": lambda nb: nb.pop("metadata"),
    "no nbformat_minor": lambda nb: nb.pop("nbformat_minor"),
    "nbformat_minor 4 with cell ids": lambda nb: nb.update(nbformat_minor=4),
    "nbformat_minor 4 without ids": lambda nb: (
        nb.update(nbformat_minor=4),
        [c.pop("id", None) for c in nb["cells"]],
    ),
    "nbformat_minor from the future with unknown keys": lambda nb: (
        nb.update(nbformat_minor=9),
        _code(nb).update(extra=1),
    ),
    "nbformat_minor negative": lambda nb: nb.update(nbformat_minor=-1),
    "unknown top-level key": lambda nb: nb.update(extra=1),
    "stream output with a bad name": lambda nb: _code(nb).update(
        outputs=[{"output_type": "stream", "name": "stdin", "text": "x"}]
    ),
    "execute_result without data": lambda nb: _code(nb).update(
        outputs=[{"output_type": "execute_result", "execution_count": 1, "metadata": {}}]
    ),
    "error output": lambda nb: _code(nb).update(
        outputs=[{"output_type": "error", "ename": "E", "evalue": "v", "traceback": ["t"]}]
    ),
    "unknown output type": lambda nb: _code(nb).update(outputs=[{"output_type": "nope"}]),
    "markdown cell with outputs": lambda nb: next(
        c for c in nb["cells"] if c["cell_type"] == "markdown"
    ).update(outputs=[]),
    "kernelspec without name": lambda nb: nb["metadata"].update(kernelspec={"display_name": "x"}),
    "cells not a list": lambda nb: nb.update(cells={}),
}


@pytest.mark.filterwarnings("ignore")  # nbformat warns while it repairs cell ids
@pytest.mark.parametrize("what", sorted(EDITS))
def test_validation_refuses_exactly_what_nbformat_refuses(what):
    """Same verdict as nbformat.validate on each malformed (or harmless) variant of a notebook?"""
    data = _edit(EDITS[what])
    assert _ours_accepts(data) == _nbformat_accepts(data), what


@pytest.mark.filterwarnings("ignore")
def test_the_variants_include_accepted_and_refused_notebooks():
    """Are both verdicts represented, so the comparison above can catch a drift either way?"""
    verdicts = {what: _nbformat_accepts(_edit(fn)) for what, fn in EDITS.items()}
    assert 5 <= sum(verdicts.values()) <= len(verdicts) - 10, verdicts


def test_every_notebook_in_the_repository_is_valid():
    """Do the source, exercise and corpus notebooks all pass (the unreadable fixtures aside)?"""
    paths = [
        *REPO.glob("solutions/*/*.ipynb"),
        *REPO.glob("exercises/*/*.ipynb"),
        *(p for p in CORPUS.glob("*.ipynb") if p.stem not in UNREADABLE),
    ]
    assert len(paths) >= 12
    for p in paths:
        nbjson.validate(json.loads(p.read_text()))


def test_node_joins_sources_and_reads_as_attributes():
    """Does a node read like nbformat's (nb.cells, cell.source as one string)?"""
    nb = nbjson.node(_edit(EDITS["source as a list of lines"]))
    assert _code(nb).source == "a = 1\nb = 2"
    assert nb.cells[0].cell_type == nb["cells"][0]["cell_type"]


def test_importing_the_cli_loads_no_validator_numpy_or_torch():
    """Is `import autograder.cli` free of nbformat, jsonschema, numpy and torch (seconds each)?"""
    code = (
        "import sys, autograder.cli, autograder.course.grade_cli\n"
        "heavy = [m for m in ('nbformat', 'jsonschema', 'numpy', 'torch', 'fastjsonschema') "
        "if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""


# -- messages in the learner's terms ---------------------------------------------------------------


def _load_message(tmp_path, text: str) -> str:
    from autograder.engine import submission

    p = tmp_path / "work.ipynb"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(submission.SubmissionError) as e:
        submission.load_notebook(p)
    return str(e.value)


@pytest.mark.parametrize(
    "what, edit, words",
    [
        (
            "source as a number",
            lambda nb: nb["cells"][0].update(source=5),
            ["cell 1", '"source"', "a number", "text"],
        ),
        (
            "source a list of numbers",
            lambda nb: _code(nb).update(source=[1, 2]),
            ['"source"', "non-text"],
        ),
        ("cell as text", lambda nb: nb["cells"].insert(2, "x"), ["cell 3 is text"]),
        (
            "cell type python",
            lambda nb: _code(nb).update(cell_type="python"),
            ['"cell_type"', "'python'", '"code"'],
        ),
        (
            "metadata a list",
            lambda nb: _code(nb).update(metadata=[]),
            ['"metadata"', "a list", "object"],
        ),
        (
            "outputs an object",
            lambda nb: _code(nb).update(outputs={}),
            ['"outputs"', "must be a list"],
        ),
        ("no source", lambda nb: _code(nb).pop("source"), ['has no "source" field']),
        (
            "execution_count text",
            lambda nb: _code(nb).update(execution_count="3"),
            ['"execution_count"', "whole number"],
        ),
    ],
)
def test_a_malformed_cell_is_named_with_its_field_and_what_it_must_be(tmp_path, what, edit, words):
    """`"source": 5` used to give "cells[0] must be valid exactly by one definition (0 matches
    found)": does the message name the cell (counted from 1), the field and what it must be?"""
    msg = _load_message(tmp_path, json.dumps(_edit(edit)))
    for w in words:
        assert w in msg, (what, msg)
    assert "exactly by one definition" not in msg and "cells[" not in msg


@pytest.mark.parametrize(
    "what, edit, words",
    [
        (
            "unknown field",
            lambda nb: _code(nb).update(extra=1),
            ["cell ", "'extra'", "cannot have"],
        ),
        ("bad id", lambda nb: _code(nb).update(id="a b"), ['"id"', "letters, digits"]),
        (
            "bad output",
            lambda nb: _code(nb).update(outputs=[5]),
            ["outputs are damaged", "Clear Outputs"],
        ),
        (
            "tags a number",
            lambda nb: _code(nb)["metadata"].update(tags=5),
            ['"metadata.tags"', "a list"],
        ),
    ],
)
def test_a_cell_the_schema_refuses_is_explained_by_its_field(tmp_path, what, edit, words):
    """Defects inside a cell that only the schema sees ("must be valid exactly by one
    definition"): is the cell's own problem named, in words?"""
    msg = _load_message(tmp_path, json.dumps(_edit(edit)))
    for w in words:
        assert w in msg, (what, msg)
    assert "exactly by one definition" not in msg


def test_an_nbformat_3_notebook_is_told_how_to_convert(tmp_path):
    """A valid nbformat 3 notebook (worksheets, no cells) used to be "JSON but not a notebook"."""
    old = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": []}]}
    msg = _load_message(tmp_path, json.dumps(old))
    assert "nbformat 3" in msg and "version 4 is needed" in msg
    assert "nbconvert --to notebook --nbformat 4" in msg


def test_an_nbformat_5_notebook_is_not_told_to_find_version_4_alone(tmp_path):
    """No Jupyter writes nbformat 5: is the learner told the file was changed and what to do?"""
    msg = _load_message(tmp_path, json.dumps(_edit(lambda nb: nb.update(nbformat=5))))
    assert "nbformat 5" in msg and "no Jupyter writes" in msg and "re-download" in msg


def test_a_number_longer_than_python_converts_is_a_clear_error(tmp_path):
    """A 5000-digit number in the JSON used to raise "Exceeds the limit (4300 digits)" out of
    the grading loop: is it a SubmissionError that says what and what to do?"""
    text = json.dumps(_edit(lambda nb: _code(nb).update(execution_count=7))).replace(
        '"execution_count": 7', '"execution_count": ' + "9" * 5000
    )
    msg = _load_message(tmp_path, text)
    assert "5000 digits" in msg and "re-download" in msg


def test_a_byte_order_mark_in_front_of_the_json_is_accepted(tmp_path):
    """An editor that writes a UTF-8 BOM: is the notebook still read?"""
    from autograder.engine import submission

    p = tmp_path / "bom.ipynb"
    p.write_text("\ufeff" + json.dumps(SOLUTION), encoding="utf-8")
    assert len(submission.load_notebook(p).cells) == len(SOLUTION["cells"])


def test_a_lone_surrogate_in_a_solution_cell_is_reported_by_cell_and_line():
    """A JSON "\\ud800" escape in the learner's code: not text Python can run. Is it reported
    with the cell and the line (not a character offset), the cell failing as in the kernel?"""
    from autograder.engine import submission
    from autograder.notebooks import notebook

    learner = _edit(lambda nb: None)
    cell = next(
        c
        for c in learner["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade_id") == "forward_kl"
    )
    lines = "".join(cell["source"]).splitlines(True)
    lines[2] = lines[2].rstrip("\n") + " \ud800\n"
    cell["source"] = lines
    number = learner["cells"].index(cell) + 1
    src = notebook.read(notebook.source_path("01_exact_kl", REPO))
    names = ["log_ratios", "forward_kl", "reverse_kl"]
    prog = submission.build_program("01_exact_kl", src, nbjson.node(learner), names)
    [warning] = [w for w in prog.warnings if "surrogate" in w]
    assert f"cell {number} ('forward_kl')" in warning and "line 3" in warning
    ran = dict(prog.cells)["forward_kl"]
    assert ran.startswith("raise SyntaxError(") and "line 3" in ran
    ran.encode("utf-8")  # what the child is sent is text


@pytest.mark.parametrize("value, words", [(5, "a number"), ("solution", "text"), ([1], "a list")])
def test_nbgrader_metadata_that_is_not_an_object_is_a_warning_not_a_crash(value, words):
    """metadata.nbgrader = 5 used to stop the class run (TypeError): is the cell read as an
    ordinary cell, with a warning naming the cell, and the rest of the notebook graded?"""
    from autograder.engine import submission
    from autograder.notebooks import notebook

    learner = _edit(lambda nb: nb["cells"][10]["metadata"].update(nbgrader=value))
    src = notebook.read(notebook.source_path("01_exact_kl", REPO))
    names = ["log_ratios", "forward_kl", "reverse_kl"]
    prog = submission.build_program("01_exact_kl", src, nbjson.node(learner), names)
    assert f"cell 11's nbgrader metadata is {words}" in " ".join(prog.warnings)
    assert prog.missing == {} and [g for g, _ in prog.cells] == names
