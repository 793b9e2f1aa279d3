"""How the grader starts itself in a child process: an import path no learner file is on.

``python -m autograder.cli`` puts the working folder first on ``sys.path``. The Check my work
button runs ``drills check`` (and the check server) from the notebook's kernel, whose working
folder is the notebook's: an ``autograder/__init__.py`` (or ``numpy.py``) planted beside a
notebook would then be imported by the grader, outside the sandbox, on the machine of whoever
checks it. So every grader child is started

- with ``-P`` (Python 3.11+: nothing is prepended to ``sys.path``); on 3.10, through ``-c``
  code that removes the prepended entry before anything of the grader is imported; and
- in the folder that holds the ``autograder`` package itself (its repository, or
  site-packages), never the notebook's: an empty entry of ``PYTHONPATH`` names the working
  folder, and that folder is one the learner's files are not in.

Paths given to the child must then be absolute (:func:`absolute`).
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE_PARENT = Path(__file__).resolve().parents[2]  # the folder holding autograder/

# Python 3.10 has no -P: -c puts "" first on sys.path, which this removes before the import.
_BOOT = (
    "import sys\n"
    "if sys.path and sys.path[0] in ('', '.'):\n"
    "    del sys.path[0]\n"
    "from autograder.cli import main\n"
    "sys.exit(main())\n"
)


def grader_argv(*args: str) -> list[str]:
    """The command line of ``drills ARGS...`` in a child of this interpreter."""
    if sys.version_info >= (3, 11):
        return [sys.executable, "-P", "-m", "autograder.cli", *args]
    return [sys.executable, "-c", _BOOT, *args]


def grader_cwd() -> str:
    """The working folder of a grader child (see the module): the package's parent folder."""
    return str(PACKAGE_PARENT)


def absolute(path: str | Path) -> str:
    """``path`` as the child, started in :func:`grader_cwd`, must be given it."""
    return str(Path(path).absolute())
