"""What the grading process itself parses of learner code is bounded, whatever a notebook holds.

The grader parses and compiles each graded cell in its own process (to find definitions,
stubs and slips): a list literal costs it about 0.5 GB per MB of text, so a 19 MB notebook
killed a grader in an 8 GB limit and took the class run with it. A cell over the limit is not
read; its functions score 0 and say why; the others are graded. `benchmarks/grader_memory.py`
prints the peak memory for the largest notebooks of each kind.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import nbformat

from autograder.course.grade_cli import check_notebook
from autograder.engine import submission

REPO = Path(__file__).resolve().parent.parent
SOLUTION = REPO / "tests" / "fixtures" / "corpus" / "solution.ipynb"
A = "01_exact_kl"


def _with_literal(tmp_path: Path, chars: int, copies: int = 1) -> Path:
    nb = json.loads(SOLUTION.read_text())
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution"))
    literal = "DATA = [" + ",".join("1" for _ in range(chars // 2)) + "]\n"
    cell["source"] = literal + "".join(cell["source"])
    for _ in range(copies - 1):
        nb["cells"].append(json.loads(json.dumps(cell)))
    path = tmp_path / f"{A}.ipynb"
    path.write_text(json.dumps(nb))
    return path


def test_the_grader_parses_no_cell_past_its_limit(tmp_path, monkeypatch):
    """A 2 MB literal in a graded cell was parsed whole by the grader (about 1 GB of its
    memory). Is no text longer than MAX_CELL_CHARS ever parsed or compiled in its process?"""
    seen: list[int] = []
    parse, comp = ast.parse, compile

    def counting_parse(source, *a, **k):
        seen.append(len(source))
        return parse(source, *a, **k)

    def counting_compile(source, *a, **k):
        seen.append(len(source) if isinstance(source, str) else 0)
        return comp(source, *a, **k)

    monkeypatch.setattr(ast, "parse", counting_parse)
    monkeypatch.setattr(submission, "compile", counting_compile, raising=False)
    nb = nbformat.read(str(_with_literal(tmp_path, 2_000_000)), as_version=4)
    source_nb = nbformat.read(str(REPO / "solutions" / A / f"{A}.ipynb"), as_version=4)
    prog = submission.build_program(A, source_nb, nb, ["log_ratios", "forward_kl", "reverse_kl"])
    assert seen and max(seen) <= submission.MAX_CELL_CHARS, max(seen)
    assert len(prog.too_large) == 1 and "200,000" in next(iter(prog.too_large.values()))


def test_a_too_large_cell_scores_its_own_functions_only(tmp_path):
    """The cell over the limit scores 0 with the reason; the cells beside it are graded as
    usual (not the whole notebook refused, not the whole class stopped)."""
    r = check_notebook(_with_literal(tmp_path, 2_000_000), A)
    got = {f.function: f for f in r.functions}
    assert r.error is None
    assert got["log_ratios"].score == 0 and "200,000" in got["log_ratios"].error
    assert got["forward_kl"].score == got["forward_kl"].points
    assert got["reverse_kl"].score == got["reverse_kl"].points


def test_copies_of_a_cell_count_towards_one_notebook_limit(tmp_path):
    """Many copies of a cell just under the limit add up: the copies past MAX_GRADED_CHARS are
    not read, and the warning says so, while the copies read still define the function."""
    r = check_notebook(_with_literal(tmp_path, submission.MAX_CELL_CHARS - 2_000, copies=7), A)
    assert any("at most 1,000,000 over all of them" in w for w in r.warnings), r.warnings
    assert r.score == r.max_score
