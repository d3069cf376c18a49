"""Every relative link in README.md, CONTRIBUTING.md and the pages of docs/
names a file that exists, so moving text between pages cannot leave a link
behind."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
CLASSROOM = ROOT / "classroom" / "README.md"

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
