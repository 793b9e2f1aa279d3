"""A Python path that reaches the course form's package and nothing of the checkout.

The project's venv holds the checkout as an editable install, whose import finder (setuptools'
``__editable__`` finder, installed by a .pth file) answers for any ``tiny_model.*`` or
``autograder.*`` module that the path's own copy lacks: with only ``PYTHONPATH=<unpacked
wheel>``, ``import tiny_model.reference`` and the case modules still succeed, from the
checkout. A test of the course form that runs the venv's Python therefore puts this folder
first on PYTHONPATH: its ``sitecustomize`` removes that finder (and its path hook) in every
process started with it, the kernels included, so the unpacked wheel is all there is.
"""

from __future__ import annotations

import os
from pathlib import Path

SITECUSTOMIZE = '''"""Written by tests/course_isolation.py: no editable-install finder in this process."""
import sys


def _editable(obj) -> bool:
    return str(getattr(obj, "__module__", "") or "").startswith("__editable__")


sys.meta_path[:] = [f for f in sys.meta_path if not _editable(f)]
sys.path_hooks[:] = [h for h in sys.path_hooks if not _editable(h)]
sys.path[:] = [p for p in sys.path if not str(p).startswith("__editable__")]
sys.path_importer_cache.clear()
'''


def pythonpath(top: Path, *entries: Path) -> str:
    """PYTHONPATH for a process that must see ``entries`` (the unpacked wheel first) and not
    the checkout: an isolating sitecustomize folder under ``top``, then the entries."""
    folder = top / "no-editable"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    return os.pathsep.join(str(p) for p in (folder, *entries))
