"""Every relative link in README.md, CONTRIBUTING.md and the pages of docs/
names a file that exists, so moving text between pages cannot leave a link
behind."""

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
NOT_A_FILE = re.compile(r"^([a-z][a-z0-9+.-]*:|//|#)", re.I)   # https:, mailto:, //host, #anchor
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "classroom" / "README.md",
         *sorted((ROOT / "docs").rglob("*.md"))]


def broken_links(page):
    """The relative links and images of `page` whose file (the part before any
    #anchor or ?query, resolved from the page's folder) does not exist."""
    tokens = [child for token in MarkdownIt().parse(page.read_text(encoding="utf-8")) for child in token.children or ()]
    targets = [t.attrs.get("href") or t.attrs.get("src") or "" for t in tokens if t.type in ("link_open", "image")]
    return [target for target in targets if not NOT_A_FILE.match(target)
            and not (page.parent / target.split("#", 1)[0].split("?", 1)[0]).exists()]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_names_a_file_that_exists(page):
    broken = broken_links(page)
    assert not broken, (f"{page.relative_to(ROOT)} links to files that do not exist: "
                        + ", ".join(f"({target})" for target in broken))
