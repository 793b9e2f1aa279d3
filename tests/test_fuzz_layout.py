"""Fuzzing discovery: generated class folders (tests/fuzz_layout.py) through every command-line
form. A slice runs here, fixed-seed; benchmarks/fuzz_layout.py runs thousands of students."""

from __future__ import annotations

import tempfile
from pathlib import Path

import fuzz_layout as fl
import fuzz_submissions as fz
from hypothesis import example, given, settings

from autograder.course import grade_cli

SETTINGS = fz.FUZZ_SETTINGS


@settings(max_examples=100, **SETTINGS)
@given(fl.class_tree())
# found by the long run: a lone notebook and a folder without one, their class folder named
# twice (`drills grade course course/submitted`), gave each two rows
@example(([fl.Student("0", "lone", 1), fl.Student("i", "nested-other", 1)], "twice"))
def test_discovery_keeps_its_promises_on_generated_classes(tree):
    """Deep chains, wide folders, links, FIFOs, odd and colliding names, ids shaped like error
    rows, under five command-line forms: does discovery never raise, never fold two students
    into one row, never drop a name, and grade every good student under their own id?"""
    students, form = tree
    with tempfile.TemporaryDirectory(prefix="drills-fuzz-layout-") as tmp:
        fl.write_tree(Path(tmp) / "course", students)
        fl.check_discovery(Path(tmp) / "course", students, form)


_GRADER: list[grade_cli.Grader] = []


@settings(max_examples=4, **SETTINGS)
@given(fl.class_tree())
@example(([fl.Student("ann", "huge", 1), fl.Student("bob", "nbgrader", 1)], "glob"))
# found by the long run: two FIFOs named as files were "not found" and both became a student
# `01_exact_kl`, two rows under one id
@example(([fl.Student("ann", "fifo", 1), fl.Student("bob", "fifo", 1)], "files"))
def test_a_generated_class_is_graded_one_row_per_discovered_submission(tree):
    """The same classes graded (children faked): is every discovered row in results.json,
    each once, and does every output parse?"""
    students, form = tree
    if not _GRADER:
        _GRADER.append(grade_cli.Grader(warm=False, per_student=False))
    with tempfile.TemporaryDirectory(prefix="drills-fuzz-layout-") as tmp:
        course = Path(tmp) / "course"
        fl.write_tree(course, students)
        subs = fl.check_discovery(course, students, form)
        if not subs:
            return
        out = Path(tmp) / "out"
        with fl.small_budget(), fz.fake_sandbox():
            grade_cli.grade_course(fl.command_line(course, students, form), out, _GRADER[0])
        rows = fl.results_rows(out)
        fl.check_huge_graded(out, students, form)
        assert len(rows) == len(set(rows)) == len(subs)
        # a lone notebook's assignment is told by its cells when it is read
        assert sorted(r[0] for r in rows) == sorted(s.student for s in subs)
        told = {(s.student, s.assignment) for s in subs}
        assert all({(st, None), (st, a)} & told for st, a in rows), (rows, told)
