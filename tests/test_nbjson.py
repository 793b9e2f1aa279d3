"""Does our notebook validation (no nbformat import) accept and refuse exactly what nbformat does?"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import nbjson

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"
SOLUTION = json.loads((CORPUS / "solution.ipynb").read_text())


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
    """Do the source, exercise and corpus notebooks all pass (the broken-JSON fixture aside)?"""
    paths = [
        *REPO.glob("solutions/*/*.ipynb"),
        *REPO.glob("exercises/*/*.ipynb"),
        *(p for p in CORPUS.glob("*.ipynb") if p.name != "broken_json.ipynb"),
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
        "import sys, autograder.cli, autograder.grade_cli\n"
        "heavy = [m for m in ('nbformat', 'jsonschema', 'numpy', 'torch', 'fastjsonschema') "
        "if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""
