"""Re-point a checkout's .venv at the checkout it sits in, after the checkout was copied or moved.

    python tools/repoint_venv.py [VENV] [--check]

`pip install -e .` writes the checkout's absolute path into the venv: the editable finder
(``site-packages/__editable___reward_drills_*_finder.py`` maps ``autograder`` and
``tiny_model`` to their folders), ``direct_url.json``, and the ``#!`` line of every script in
``bin/`` (``drills``, ``jupyter``, ``pytest``, …) and the ``activate`` scripts. A copied or
moved checkout keeps them all, so its ``drills`` grades the *original's* code (and runs the
original venv's Python). This script reads the checkout the venv was installed for from the
finder and, when it is not the checkout the venv now sits in, replaces that path by the new
one in those files: what re-installing would write, without the network. Standard library
only: it runs before the venv can import anything. ``make`` runs it before every target;
``--check`` only says whether the venv points elsewhere (exit 1 if it does); when all is well
it says which checkout the venv runs.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

_MAPPING = re.compile(r"""['"]autograder['"]\s*:\s*['"]([^'"]+)/autograder['"]""")


def finders(venv: Path) -> list[Path]:
    return sorted(venv.glob("lib*/python*/site-packages/__editable___reward_drills_*_finder.py"))


def installed_for(venv: Path) -> Path | None:
    """The checkout the venv's editable install points at, or None (no editable install)."""
    for f in finders(venv):
        m = _MAPPING.search(f.read_text(encoding="utf-8"))
        if m:
            return Path(m.group(1))
    return None


def files_to_rewrite(venv: Path) -> list[Path]:
    site = [p for p in venv.glob("lib*/python*/site-packages") if p.is_dir()]
    out = list(finders(venv))
    out += [u for s in site for u in s.glob("reward_drills-*.dist-info/direct_url.json")]
    out += [p for p in sorted((venv / "bin").glob("*")) if p.is_file() and not p.is_symlink()]
    return out


def repoint(venv: Path, old: Path, new: Path) -> list[Path]:
    """Replace the checkout ``old`` by ``new`` wherever the venv wrote it; the files changed."""
    changed = []
    pairs = [(f"{old}/", f"{new}/"), (f'file://{old}"', f'file://{new}"')]
    for f in files_to_rewrite(venv):
        try:
            text = f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # a binary in bin/ (none in a plain venv): nothing written there by pip
        new_text = text
        for a, b in pairs:
            new_text = new_text.replace(a, b)
        if new_text != text:
            mode = f.stat().st_mode
            f.write_text(new_text, encoding="utf-8")
            f.chmod(mode)
            changed.append(f)
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("venv", nargs="?", default=".venv")
    ap.add_argument(
        "--check", action="store_true", help="only report; exit 1 if it points elsewhere"
    )
    args = ap.parse_args(argv)
    venv = Path(args.venv).absolute()
    here = venv.parent
    old = installed_for(venv)
    if old is None or old == here:
        if args.check:  # `make` runs it quietly; asked, it says what it found
            print(
                f"{venv}: no editable install of the course in it, nothing to re-point"
                if old is None
                else f"{venv} runs this checkout ({here}): nothing to re-point"
            )
        return 0
    if args.check:
        print(
            f"{venv} is installed for {old}, not {here}: run `make` (or this script) to re-point it"
        )
        return 1
    changed = repoint(venv, old, here)
    print(f"{venv} was installed for {old}; re-pointed at {here} ({len(changed)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
