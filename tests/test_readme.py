"""Every relative link in README.md, CONTRIBUTING.md and the pages of docs/
names a file that exists, so moving text between pages cannot leave a link
behind; and a learner on classic Notebook 6 finds what to do."""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
CLASSROOM = ROOT / "classroom" / "README.md"
NOTEBOOKS = ROOT / "notebooks"

FENCED = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)       # code blocks: their brackets are code
INLINE_CODE = re.compile(r"`[^`\n]*`")
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
NOT_A_FILE = re.compile(r"^([a-z][a-z0-9+.-]*:|//|#)", re.I)   # https:, mailto:, //host, #anchor


def links(text):
    """The link targets of a markdown text, outside code."""
    text = INLINE_CODE.sub("", FENCED.sub("", text))
    return INLINE_LINK.findall(text) + REFERENCE_LINK.findall(text)


def broken_links(page):
    """The relative links of `page` whose file (the part before any #anchor
    or ?query, resolved from the page's folder) does not exist."""
    broken = []
    for target in links(page.read_text(encoding="utf-8")):
        if NOT_A_FILE.match(target):
            continue
        path = target.split("#", 1)[0].split("?", 1)[0]
        if path and not (page.parent / path).exists():
            broken.append(target)
    return broken


def pages():
    return [README, ROOT / "CONTRIBUTING.md", CLASSROOM, *sorted(DOCS.rglob("*.md"))]


@pytest.mark.parametrize("page", pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_names_a_file_that_exists(page):
    broken = broken_links(page)
    assert not broken, (f"{page.relative_to(ROOT)} links to files that do not exist: "
                        + ", ".join(f"({target})" for target in broken))


CLASSIC = "classic-notebook-6-with-ipywidgets-7"        # docs/troubleshooting.md's section, as GitHub anchors it


def anchors(text):
    """The anchors GitHub makes of a page's headings."""
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"^#{1,6} (.+)$", FENCED.sub("", text), re.M)}


def test_classic_notebook_6_is_explained_where_a_learner_looks():
    """Many lab machines still run classic Notebook 6 with ipywidgets 7, where a
    stored notebook opens "Not Trusted", with no drawing and its widgets as
    text: the troubleshooting page says what shows, why and what to do, and
    the README points there."""
    page = (DOCS / "troubleshooting.md").read_text(encoding="utf-8")
    assert CLASSIC in anchors(page), f"docs/troubleshooting.md has no section #{CLASSIC}"
    section = page.split("## Classic Notebook 6", 1)[1].split("\n## ", 1)[0]
    for needed in ("Not Trusted", "unsaved changes", "Trust Notebook", "jupyter trust", "ipywidgets 7",
                   "Run All", "make lab"):
        assert needed in section, needed
    assert f"docs/troubleshooting.md#{CLASSIC}" in README.read_text(encoding="utf-8")


def test_the_index_says_what_notebook_6_shows_and_why():
    """The index, the page a learner opens first, names each thing Notebook 6
    shows with its cause, as the troubleshooting page does: no drawing (not
    trusted), widgets as text (state saved by ipywidgets 8), marked changed
    (it writes in the kernel's version), and what to do."""
    index = nbformat.read(NOTEBOOKS / "00-index.ipynb", as_version=4)
    bullet = next(line for cell in index.cells if cell.cell_type == "markdown"
                  for line in cell.source.split("\n- ") if "Notebook 6" in line)
    said = " ".join(bullet.split())
    for symptom, cause in (("Not Trusted", "Trust Notebook"), ("widgets show as text", "ipywidgets 8"),
                           ("marked changed", "Python version"), ("Run All", "")):
        assert symptom in said and cause in said, (symptom, cause, said)
