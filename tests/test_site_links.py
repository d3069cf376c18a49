"""The site's way out to a running notebook: every launch link on every page
(Binder, Colab, the repository button, the download) names the repository
the site was built for (SITE_REPOSITORY, else helpers.project.REPOSITORY), at
branch helpers.project.BRANCH, and a notebook that exists in notebooks/.
Read from the built HTML, no browser needed. A link to `master`, to another
repository or to a missing notebook must fail the same check."""

import runpy
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import ROOT, SITE_FORK

from helpers.project import BRANCH, REPOSITORY, repository_url
from tools.build.site import retargeted, site_repository
from tools.notebooks import notebook_paths

FORK = SITE_FORK                         # not REPOSITORY, so an address left pointing there shows
NOTEBOOKS = {p.name for p in notebook_paths()}
KINDS = ("Binder", "Colab", "repository", "download")


class Links(HTMLParser):
    """Every <a href> of a page, with its class attribute."""

    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and attrs.get("href"):
            self.found.append((attrs["href"], attrs.get("class") or ""))


def links(html):
    parser = Links()
    parser.feed(html)
    return parser.found


def notebook_problem(path):
    """What is wrong with a launch link's notebook path (from the repository's root)."""
    if path.startswith("notebooks/") and path.removeprefix("notebooks/") in NOTEBOOKS:
        return None
    return f"names {path or 'no path'}, not a notebook in notebooks/"


def launch(href, repository):
    """(kind, notebook path, problem or None) for a link that launches a
    notebook or names the repository (the site's or REPOSITORY); None for
    any other link."""
    url = urlsplit(href)
    parts = url.path.strip("/").split("/")
    if url.netloc == "mybinder.org":
        query = parse_qs(url.query)
        path = query.get("labpath", [""])[0] or query.get("urlpath", [""])[0].removeprefix("lab/tree/")
        right = parts[:2] == ["v2", "gh"] and "/".join(parts[2:4]) == repository and parts[4:] == [BRANCH]
        return "Binder", path, None if right else f"{href} is not {repository} at {BRANCH}"
    if url.netloc == "colab.research.google.com":
        path = "/".join(parts[5:])
        right = parts[:1] == ["github"] and "/".join(parts[1:3]) == repository and parts[3:5] == ["blob", BRANCH]
        return "Colab", path, None if right else f"{href} is not {repository} at {BRANCH}"
    if url.netloc == "github.com" and "/".join(parts[:2]) in (repository, REPOSITORY):
        if href.rstrip("/") == repository_url(repository):
            return "repository", None, None
        right = "/".join(parts[:2]) == repository and parts[2:4] in (["blob", BRANCH], ["tree", BRANCH])
        return "repository", "/".join(parts[4:]), None if right else f"{href} is not {repository} at {BRANCH}"
    return None


def link_problems(href, repository):
    """What is wrong with one link, launch(...) or its notebook path."""
    found = launch(href, repository)
    if found is None:
        return []
    kind, path, problem = found
    problem = problem or (path is not None and notebook_problem(path))
    return [f"{kind}: {problem}"] if problem else []


def page_problems(html, page, repository, sources):
    """What is wrong with the launch links of the page made from notebook
    `page` (a file name in notebooks/): each link as link_problems says; the
    page's own notebook on Binder and in Colab; the repository button; a
    download that gives notebooks/`page` itself."""
    found, kinds = [], set()
    for href, classes in links(html):
        if "download-source-button" in classes or href.startswith("_sources/"):
            kinds.add("download")
            if href != f"_sources/{page}" or (sources / page).read_bytes() != (ROOT / "notebooks" / page).read_bytes():
                found.append(f"the download {href} is not notebooks/{page}")
            continue
        problems = link_problems(href, repository)
        found += problems
        kind = launch(href, repository)
        if kind and not problems and (kind[1] == f"notebooks/{page}" or "repository-button" in classes):
            kinds.add(kind[0])
    return found + [f"no {kind} link to {page}" for kind in KINDS if kind not in kinds]


@pytest.fixture(scope="module")
def site(built_site):
    """The site as a fork's workflow builds it: SITE_REPOSITORY set (conftest's built_site)."""
    return built_site


def page_html(site, page):
    return (site / page.replace(".ipynb", ".html")).read_text()


@pytest.mark.parametrize("page", sorted(NOTEBOOKS), ids=[Path(n).stem for n in sorted(NOTEBOOKS)])
def test_every_launch_link_names_the_sites_repository_its_branch_and_a_notebook(site, page):
    assert page_problems(page_html(site, page), page, FORK, site / "_sources") == []


def test_pages_that_are_no_notebook_link_only_to_the_sites_repository(site):
    pages = sorted(p for p in site.glob("*.html") if p.stem + ".ipynb" not in NOTEBOOKS)
    assert pages, "the site has no search or index page"
    assert [(p.name, problem) for p in pages for href, _ in links(p.read_text())
            for problem in link_problems(href, FORK)] == []


PAGE = "01-dynamic-control-flow.ipynb"


def test_without_site_repository_the_site_names_helpers_project_repository(monkeypatch):
    monkeypatch.delenv("SITE_REPOSITORY", raising=False)
    assert site_repository() == REPOSITORY
    conf = runpy.run_path(str(ROOT / "site" / "conf.py"))["html_theme_options"]
    assert conf["repository_url"] == repository_url(REPOSITORY) and conf["repository_branch"] == BRANCH
    monkeypatch.setenv("SITE_REPOSITORY", FORK)
    conf = runpy.run_path(str(ROOT / "site" / "conf.py"))["html_theme_options"]
    assert conf["repository_url"] == repository_url(FORK) and site_repository() == FORK


def test_the_notebooks_links_to_the_collection_are_retargeted_and_nothing_else():
    colab = f"[Open in Colab](https://colab.research.google.com/github/{REPOSITORY}/blob/{BRANCH}/notebooks/{PAGE})"
    assert retargeted(colab, FORK) == colab.replace(REPOSITORY, FORK)
    link = f"[the repository](https://github.com/{REPOSITORY})"
    assert retargeted(link, FORK) == link.replace(REPOSITORY, FORK)
    longer = f"https://github.com/{REPOSITORY}-extra/blob/{BRANCH}/x"
    assert retargeted(longer, FORK) == longer
