"""The course form's values: what Check my work grades against where no answer key is installed.

A graded class receives the course form (`drills release --course OUT`): the released notebooks
and a wheel of this package without the solution notebooks, the case modules (their mistake
formulas rebuild the references) or tiny_model's reference module (05-07's wheel carries the
rest of tiny_model, for their live cells). In their place the wheel carries, per
notebook, one values bundle (``autograder/course_values/<assignment>.json``): the outcomes a
learner's own check needs, computed by the instructor's full form on the public draw (the
public default secret, no student id), so they are values, never code:

    names, points, specs   the graded functions, their points, and the outlines of their
                           FunctionSpecs (ids, kinds, weights, tolerances, notes; no generator,
                           no formula: scoring.cache.spec_outline)
    inputs, expected       every case's inputs on the public draw (a caller's served tables of
                           its graded callees included) and the reference's outcomes on them,
                           gradient expectations included
    mistakes               every catalogued mistake's outcomes on the same inputs, so a
                           failing function is still diagnosed by name
    served                 the callees each function is served by value
    outline                the source notebook's setup cells as they are, and each solution
                           cell as the signatures of the functions it defines (every body one
                           ``raise NotImplementedError``): which cell gives which function, and
                           their parameters

A bundle is versioned (``format``, ``version``) and carries a fingerprint (sha256 of its body
in canonical JSON), checked on every read: a bundle edited by hand, cut short or of another
version is refused with a sentence, never used. ``course.json`` beside the bundles lists the
notebooks the course form holds and, for those it does not hold yet, why.

The course form is active where this folder (inside the installed package) holds
``course.json``; a repository checkout never has it, so the full form is unchanged.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from autograder.notebooks import nbjson

VALUES = Path(__file__).resolve().parents[1] / "course_values"  # autograder/course_values/
FORMAT = "reward-drills course values"
VERSION = 1
MANIFEST = "course.json"
PUBLIC_DRAW = {"secret": "public default", "student": None}


class CourseFormError(RuntimeError):
    """What the course form cannot do, or a values bundle that cannot be used, in a sentence."""


@functools.lru_cache(maxsize=1)
def _installed() -> bool:
    """Does the installed package hold the course form's marker? (Asked on every served
    lookup and memo read of a grading run; an installed package does not change under it.)"""
    return (VALUES / MANIFEST).is_file()


def active(root: Path | None = None) -> bool:
    """Is this the course form (``root``: the course root in use, when known)?"""
    if root is not None and Path(root).resolve() != VALUES:
        return False
    return _installed()


def canonical(body: Any) -> bytes:
    """The bytes a fingerprint is taken of: JSON with its keys in their order (outcomes keep
    their dicts' order: scoring.cache), no spaces, no NaN."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def fingerprint(body: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical(body)).hexdigest()


def wrap(body: dict) -> dict:
    """A bundle (or the manifest) as written: its format, version and fingerprint, then its body."""
    return {"format": FORMAT, "version": VERSION, "fingerprint": fingerprint(body), "body": body}


def _unwrap(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CourseFormError(f"the course form's values file {path.name} is missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CourseFormError(
            f"the course form's values file {path.name} cannot be read ({e})"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CourseFormError(f"{path.name} is not a reward-drills values bundle")
    if data.get("version") != VERSION:
        raise CourseFormError(
            f"{path.name} is a values bundle of version {data.get('version')!r}; this package "
            f"reads version {VERSION}: install the wheel and the values of the same release"
        )
    body = data.get("body")
    if not isinstance(body, dict) or data.get("fingerprint") != fingerprint(body):
        raise CourseFormError(
            f"{path.name}'s fingerprint does not match its values (edited or cut short): "
            "reinstall the course's package"
        )
    return body


@functools.lru_cache(maxsize=1)
def manifest() -> dict:
    """course.json: {"assignments": [...], "not_included": {assignment: why}, "bundles":
    {assignment: fingerprint}}."""
    return _unwrap(VALUES / MANIFEST)


def assignments() -> list[str]:
    return list(manifest()["assignments"])


def not_included(assignment: str) -> str | None:
    """Why the course form does not hold ``assignment`` (None: it does, or it is unknown)."""
    return manifest().get("not_included", {}).get(assignment)


@functools.lru_cache(maxsize=16)
def bundle(assignment: str) -> dict:
    """The checked body of ``assignment``'s values bundle."""
    if assignment not in assignments():
        why = not_included(assignment)
        raise CourseFormError(
            f"{assignment} cannot be checked in the course form"
            + (f": {why}" if why else ": this course's package holds no values for it")
        )
    body = _unwrap(VALUES / f"{assignment}.json")
    if body.get("assignment") != assignment:
        raise CourseFormError(f"{assignment}.json holds the values of {body.get('assignment')!r}")
    if manifest().get("bundles", {}).get(assignment) != fingerprint(body):
        raise CourseFormError(
            f"{assignment}.json is not the bundle course.json lists (another release's?): "
            "reinstall the course's package"
        )
    return body


@functools.lru_cache(maxsize=16)
def source(assignment: str) -> nbjson.Node:
    """The outline notebook of ``assignment`` (setup cells; solution cells as signatures; test
    cells), read as the source notebook is: the grader's layout code runs on it unchanged."""
    return nbjson.node(bundle(assignment)["outline"])


def outline_cell(source: str) -> str:
    """A solution cell's text as its outline: each function it defines at its top level, with
    its parameters (defaults included) and a body that raises NotImplementedError; nothing
    else of the cell (no body, no decorator, no constant)."""
    out = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stub = type(node)(
                name=node.name,
                args=node.args,
                body=[ast.Raise(exc=ast.Name("NotImplementedError", ast.Load()), cause=None)],
                decorator_list=[],
                returns=None,
                type_comment=None,
                **({"type_params": []} if "type_params" in node._fields else {}),
            )
            out.append(ast.unparse(ast.fix_missing_locations(stub)))
    return "\n\n\n".join(out) + "\n" if out else ""
