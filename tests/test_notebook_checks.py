"""Do the shared checks on an executed notebook (tests/notebook_checks.py, used by
tests/test_notebooks.py and tests/test_browser.py) catch the mistakes they exist for?
Hand-made notebook nodes, no kernel."""

from __future__ import annotations

from nbformat import v4
from notebook_checks import exercise_problems, solution_problems


def _test_cell(grade_id="test_kl", points=2, outputs=None):
    cell = v4.new_code_cell("grade()")
    cell.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "locked": True,
        "grade_id": grade_id,
        "points": points,
    }
    cell.outputs = (
        outputs
        if outputs is not None
        else [v4.new_output("execute_result", data={"text/plain": f"{float(points)}"})]
    )
    return cell


def _error(ename):
    return v4.new_output("error", ename=ename, evalue="boom", traceback=[])


def test_a_clean_solved_notebook_passes():
    nb = v4.new_notebook(cells=[v4.new_code_cell("x = 1"), _test_cell()])
    assert solution_problems(nb) == []


def test_catches_a_hidden_test_short_of_its_points():
    short = [v4.new_output("execute_result", data={"text/plain": "1.5"})]
    nb = v4.new_notebook(cells=[_test_cell(points=2, outputs=short)])
    assert solution_problems(nb) == ["test_kl returned 1.5 of its 2 points"]


def test_catches_a_hidden_test_that_returned_nothing():
    nb = v4.new_notebook(cells=[_test_cell(outputs=[])])
    assert solution_problems(nb) == ["test_kl returned nothing (no execute_result)"]


def test_catches_a_stderr_line_in_a_hidden_test():
    cell = _test_cell()
    cell.outputs.append(v4.new_output("stream", name="stderr", text="UserWarning: slow\n"))
    problems = solution_problems(v4.new_notebook(cells=[cell]))
    assert len(problems) == 1 and "test_kl wrote to stderr" in problems[0], problems


def test_catches_an_error_in_a_solved_notebook():
    cell = v4.new_code_cell("f()", outputs=[_error("ValueError")])
    problems = solution_problems(v4.new_notebook(cells=[cell, _test_cell()]))
    assert problems == ["cell 0 raised ValueError: boom"]


def test_catches_a_solved_notebook_without_hidden_tests():
    nb = v4.new_notebook(cells=[v4.new_code_cell("x = 1")])
    assert solution_problems(nb) == ["the solved notebook has no hidden-test cell"]


def test_an_exercise_failing_only_with_not_implemented_passes():
    cell = v4.new_code_cell("f()", outputs=[_error("NotImplementedError")])
    assert exercise_problems(v4.new_notebook(cells=[cell])) == []


def test_catches_an_exercise_with_another_error():
    cells = [
        v4.new_code_cell("f()", outputs=[_error("NotImplementedError")]),
        v4.new_code_cell("g()", outputs=[_error("NameError")]),
    ]
    problems = exercise_problems(v4.new_notebook(cells=cells))
    assert len(problems) == 1 and "NameError" in problems[0], problems


def test_catches_an_exercise_with_nothing_left_to_solve():
    nb = v4.new_notebook(cells=[v4.new_code_cell("x = 1")])
    assert exercise_problems(nb) == ["the exercise has no unsolved function (no error at all)"]
