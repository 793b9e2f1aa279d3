"""Notebook JSON without importing nbformat: validation against nbformat's own v4 schema.

``import nbformat`` pulls in its validator, jsonschema and jsonschema's format
checkers (seconds of start-up, most of it compiling grammars no notebook
needs). Grading needs none of that, so this module reads notebooks itself:

- :func:`validate` checks a parsed notebook exactly as ``nbformat.validate``
  does for nbformat 4: the schema file of the notebook's minor version, shipped
  inside the installed nbformat package (found without importing it), compiled
  with ``fastjsonschema`` (nbformat's own alternative validator); a notebook
  from a newer minor version gets the latest schema with unknown properties,
  cells and outputs allowed; from 4.5 on, cells without an id or with a
  repeated id are given fresh ids first (nbformat repairs them the same way).
- :func:`node` turns the parsed JSON into :class:`Node` dicts with attribute
  access (``nb.cells``, ``cell.source``), with multi-line sources joined into
  one string, as ``nbformat.read`` returns them.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

CURRENT_MINOR = 5  # the newest nbformat 4 minor version whose schema nbformat ships
_VALIDATORS: dict[tuple[int, bool], Any] = {}


class NotebookInvalid(ValueError):
    """The JSON is not a valid nbformat 4 notebook; the message says where."""


class Node(dict):
    """A dict whose keys read as attributes, like nbformat's NotebookNode."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


def node(data: Any) -> Any:
    """``data`` with every dict turned into a :class:`Node` and cell sources joined."""
    out = _nodes(data)
    if isinstance(out, Node) and isinstance(out.get("cells"), list):
        for cell in out["cells"]:
            if isinstance(cell, dict) and isinstance(cell.get("source"), list):
                cell["source"] = "".join(str(s) for s in cell["source"])
    return out


def _nodes(x: Any) -> Any:
    if isinstance(x, dict):
        return Node((k, _nodes(v)) for k, v in x.items())
    if isinstance(x, list):
        return [_nodes(v) for v in x]
    return x


def schema_dir() -> Path:
    """nbformat's folder of v4 schema files, located without importing nbformat."""
    spec = importlib.util.find_spec("nbformat")
    if spec is None or not spec.submodule_search_locations:
        raise NotebookInvalid("nbformat is not installed: cannot validate notebooks")
    return Path(list(spec.submodule_search_locations)[0]) / "v4"


def _schema_file(minor: int) -> tuple[Path, bool]:
    """(schema file, relaxed?) for a notebook of nbformat 4.``minor``."""
    folder = schema_dir()
    exact = folder / f"nbformat.v4.{minor}.schema.json"
    if minor <= CURRENT_MINOR and exact.is_file():
        return exact, False
    if minor > CURRENT_MINOR:
        return folder / "nbformat.v4.schema.json", True
    raise NotebookInvalid(f"no schema for nbformat 4.{minor}")


def _relax(schema: Any) -> Any:
    """A notebook from a newer minor version: unknown properties, cells and outputs allowed."""

    def walk(o: Any) -> Any:
        if isinstance(o, dict):
            return {k: (True if k == "additionalProperties" else walk(v)) for k, v in o.items()}
        if isinstance(o, list):
            return [walk(v) for v in o]
        return o

    out = walk(schema)
    out["definitions"]["cell"]["oneOf"].append({"$ref": "#/definitions/unrecognized_cell"})
    out["definitions"]["output"]["oneOf"].append({"$ref": "#/definitions/unrecognized_output"})
    return out


def _validator(minor: int):
    import fastjsonschema

    path, relaxed = _schema_file(minor)
    key = (minor if not relaxed else -1, relaxed)
    if key not in _VALIDATORS:
        schema = json.loads(path.read_text(encoding="utf-8"))
        if relaxed:
            schema = _relax(schema)
        # use_default=False: validating must not write the schema's defaults into the notebook.
        _VALIDATORS[key] = fastjsonschema.compile(schema, use_default=False)
    return _VALIDATORS[key]


def _repair_cell_ids(data: dict) -> None:
    """From 4.5 on: give cells without an id, or with a repeated one, a fresh id (as nbformat does)."""
    seen: set = set()
    n = 0
    for cell in data.get("cells", []):
        if not isinstance(cell, dict):
            continue
        cid = cell.get("id")
        if "id" not in cell or (isinstance(cid, str) and cid in seen):
            while f"cell-{n}" in seen:
                n += 1
            cell["id"] = f"cell-{n}"
            n += 1
        if isinstance(cell.get("id"), str):
            seen.add(cell["id"])


def validate(data: Any) -> None:
    """Raise NotebookInvalid unless ``data`` (parsed JSON) is a valid nbformat 4 notebook.

    Cells of a 4.5+ notebook that lack an id, or repeat one, get a fresh id first
    (``data`` is changed in place), as ``nbformat.validate`` does.
    """
    import fastjsonschema

    if not isinstance(data, dict):
        raise NotebookInvalid("a notebook is a JSON object")
    if data.get("nbformat") != 4 or type(data.get("nbformat")) is not int:
        raise NotebookInvalid(f"nbformat {_short(data.get('nbformat'))}; version 4 is needed")
    minor = data.get("nbformat_minor", 0)
    if type(minor) is not int or minor < 0:
        raise NotebookInvalid(
            f'"nbformat_minor" is {_short(minor)}; it must be a whole number of 0 or more ({_FIX})'
        )
    if minor >= 5 and isinstance(data.get("cells"), list):
        _repair_cell_ids(data)
    try:
        _validator(minor)(data)
    except fastjsonschema.JsonSchemaException as e:
        relaxed = minor > CURRENT_MINOR
        problem = cell_problem(data, relaxed) or _cell_schema_problem(data, minor, e)
        raise NotebookInvalid(problem or _message(e)) from None


def _short(x: Any) -> str:
    """A number as itself, anything else as what it is ("a list"): never a huge repr."""
    if type(x) is int and abs(x) < 10**6:
        return str(x)
    return json_type(x)


def json_type(x: Any) -> str:
    """What a JSON value is, in words: "a number", "text", "a list", "true or false", "null"."""
    if isinstance(x, bool):
        return "true or false"
    if isinstance(x, (int, float)):
        return "a number"
    if isinstance(x, str):
        return "text"
    if isinstance(x, list):
        return "a list"
    if x is None:
        return "null"
    return "an object"


_CELL_FIELDS = {
    "code": ("metadata", "source", "outputs", "execution_count"),
    "markdown": ("metadata", "source"),
    "raw": ("metadata", "source"),
}
_FIX = "re-download the notebook, or copy your code into a fresh copy of it"


def cell_problem(data: Any, relaxed: bool = False) -> str | None:
    """The first defect of ``data["cells"]`` that a learner can act on, in their terms
    (cells counted from 1, the field named, what it must be), or None. Called when the
    schema fails, whose own words ("cells[0] must be valid exactly by one definition")
    name neither the field nor what was expected."""
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return None
    for n, cell in enumerate(cells, 1):
        if not isinstance(cell, dict):
            return f"cell {n} is {json_type(cell)}; each cell must be an object ({_FIX})"
        kind = cell.get("cell_type")
        if not isinstance(kind, str) or kind not in _CELL_FIELDS:
            if relaxed and isinstance(kind, str):
                continue
            shown = repr(kind[:40]) if isinstance(kind, str) else json_type(kind)
            return (
                f'cell {n}\'s "cell_type" is {shown}; it must be "code", "markdown" or "raw" '
                f"({_FIX})"
            )
        for name in _CELL_FIELDS[kind]:
            if name not in cell:
                return f'cell {n} (a {kind} cell) has no "{name}" field ({_FIX})'
        src = cell["source"]
        if not isinstance(src, str) and not (
            isinstance(src, list) and all(isinstance(s, str) for s in src)
        ):
            what = json_type(src) if not isinstance(src, list) else "a list holding non-text"
            return (
                f'cell {n}\'s "source" is {what}; it must be text (a string or a list of '
                f"strings) ({_FIX})"
            )
        if not isinstance(cell["metadata"], dict):
            return (
                f'cell {n}\'s "metadata" is {json_type(cell["metadata"])}; it must be an '
                f"object ({_FIX})"
            )
        if kind == "code":
            if not isinstance(cell["outputs"], list):
                return (
                    f'cell {n}\'s "outputs" is {json_type(cell["outputs"])}; it must be a list '
                    f"({_FIX})"
                )
            count = cell["execution_count"]
            if count is not None and (type(count) is not int or count < 0):
                return (
                    f'cell {n}\'s "execution_count" is {json_type(count)}; it must be a whole '
                    f"number or null ({_FIX})"
                )
    return None


def _cell_validator(minor: int, kind: str):
    """A validator of one cell of type ``kind`` (its definition in the notebook's schema)."""
    import fastjsonschema

    path, relaxed = _schema_file(minor)
    key = (f"{minor}:{kind}", relaxed)
    if key not in _VALIDATORS:
        schema = json.loads(path.read_text(encoding="utf-8"))
        if relaxed:
            schema = _relax(schema)
        one = {"$ref": f"#/definitions/{kind}_cell", "definitions": schema["definitions"]}
        _VALIDATORS[key] = fastjsonschema.compile(one, use_default=False)
    return _VALIDATORS[key]


def _cell_schema_problem(data: Any, minor: int, e: Exception) -> str | None:
    """For a schema failure inside one cell: what is wrong with that cell, in words (the
    schema only says the cell matches none of the three kinds of cell)."""
    import fastjsonschema

    m = re.match(r"data\.cells\[(\d+)\]", str(getattr(e, "message", e)))
    if m is None:
        return None
    i = int(m.group(1))
    try:
        cell = data["cells"][i]
        kind = cell["cell_type"]
        _cell_validator(minor, kind)(cell)
    except fastjsonschema.JsonSchemaException as inner:
        return f"cell {i + 1} (a {kind} cell): {_cell_words(str(inner.message))}"
    except Exception:  # noqa: BLE001 (no better words than the schema's own)
        return None
    return None


_TYPE_WORDS = {
    "array": "a list",
    "object": "an object",
    "boolean": "true or false",
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "null": "null",
}


def _cell_words(text: str) -> str:
    """A schema message about one cell ("data.metadata.tags must be array"), in words."""
    text = text.splitlines()[0][:200] if text else ""
    if text.startswith("data.outputs"):
        return (
            "its outputs are damaged; clear them (Edit, Clear Outputs of All Cells) and save "
            "the notebook again"
        )
    extra = re.match(r"data must not contain (\{.*\}) properties", text)
    if extra:
        return f"it has fields a notebook cell cannot have ({extra.group(1)[:80]}) ({_FIX})"
    if text.startswith("data.id"):
        return (
            'its "id" must be 1 to 64 letters, digits, "-" or "_" (re-download the notebook, '
            "or copy your code into a fresh copy of it)"
        )
    for schema_word, word in _TYPE_WORDS.items():
        text = text.replace(f"must be {schema_word}", f"must be {word}")
    field = re.match(r"data\.([\w.\[\]-]+) (.*)", text)
    if field:
        return f'its "{field.group(1)}" {field.group(2)} ({_FIX})'
    return text.replace("data ", "the cell ", 1) + f" ({_FIX})"


def _message(e: Exception) -> str:
    text = str(getattr(e, "message", e)).replace("data.", "", 1).replace("data[", "[", 1)
    if not text:
        return "does not match the nbformat 4 schema"
    text = text.splitlines()[0][:200]
    # the schema's "cells[3]" is the learner's fourth cell
    return re.sub(r"^cells\[(\d+)\]", lambda m: f"cell {int(m.group(1)) + 1}", text)


def read(path: Path) -> Node:
    """A trusted notebook file (a source notebook): parsed, validated, as :class:`Node` s."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        validate(data)
    except (ValueError, OSError) as e:
        raise NotebookInvalid(f"{path}: not a valid notebook ({e})") from None
    return node(data)
