"""Does the README stay a front page, and do its links and the docs/ pages' links lead
somewhere?

The README holds the two commands, the notebook table and a paragraph per reader, and links
every page of docs/; the rest lives in docs/. A page nobody links, a link to a moved file, or
a notebook missing from the table fails here.
"""

from __future__ import annotations

import re

from conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _relative_links(page):
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
            yield target.split("#", 1)[0]


def test_readme_fits_on_a_screen_or_two():
    """Is the README at most ~150 lines?"""
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= 150, f"README.md has {n} lines: move the detail into docs/"


def test_readme_links_every_docs_page():
    """Is every page of docs/ linked from the README?"""
    linked = {(README.parent / t).resolve() for t in _relative_links(README)}
    pages = sorted(DOCS.glob("*.md"))
    assert pages, "docs/ has no pages"
    missing = [p.name for p in pages if p.resolve() not in linked]
    assert not missing, f"docs pages the README does not link: {missing}"


def test_relative_links_lead_to_files():
    """Does every relative link of the README and of docs/ name a file or folder that exists?"""
    broken = [
        f"{page.relative_to(ROOT)}: {target}"
        for page in [README, *sorted(DOCS.glob("*.md"))]
        for target in _relative_links(page)
        if not (page.parent / target).exists()
    ]
    assert not broken, broken


def test_notebook_table_lists_every_exercise():
    """Does the README's notebook table link every exercise notebook, with its Binder launch link?"""
    text = README.read_text(encoding="utf-8")
    for nb in sorted(ROOT.glob("exercises/*/*.ipynb")):
        if nb.stem != nb.parent.name:
            continue
        rel = nb.relative_to(ROOT).as_posix()
        assert f"]({rel})" in text, f"{rel} is missing from the README's notebook table"
        assert f"urlpath=lab/tree/{rel})" in text, f"{rel} has no Binder launch link"
