"""The static site (tools/build/site.py), built for a fork and opened page by page in headless Chromium, and its
launch links read from the HTML; each check is also shown failing on a page broken for it."""

import functools
import http.server
import re
import runpy
import threading
from html import unescape
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import nbformat
import pytest
from conftest import ROOT

from helpers.project import BRANCH, REPOSITORY, binder_url, colab_url, repository_url
from tools.build.site import build, site_repository
from tools.notebooks import notebook_paths
from tools.testkit.legibility import measure

ARTIFACTS = ROOT / "artifacts" / "site"
PATHS = notebook_paths()
FORK = "a-learner/graphs-fork"     # not REPOSITORY, so an address left pointing there shows
OP = re.compile(r"^n\d+ op: ([^\s,|]+)", re.M)  # "MulBackward0 | ...", or "mul, shape (2,)" in an FX graph
WIDTH = 1280      # a laptop's window: what tests/structure.py's LINE_LIMIT is measured for
# Code the learner reads (code cells, markdown code blocks, folded solutions)
# that scrolls sideways; printed outputs are left out.
SCROLLING = """() => [...document.querySelectorAll('article pre')]
  .filter(pre => !pre.closest('.cell_output') && pre.scrollWidth > pre.clientWidth)
  .map(pre => pre.textContent.trim().split('\\n')[0].slice(0, 40))"""


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SITE_REPOSITORY", FORK)
        return build(folder / "site", source=folder / "source")


def expected_labels(path):
    """The operation names in the text form of the notebook's stored drawings."""
    nb = nbformat.read(path, as_version=4)
    text = "".join(o.get("data", {}).get("text/plain", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.outputs if "<svg" in o.get("data", {}).get("image/svg+xml", "")
                   or "<svg" in o.get("data", {}).get("text/html", ""))
    return set(OP.findall(text))


def problems(page, expected):
    """Drawings missing or lacking names, code that scrolls sideways; a drawing is an <svg> with g.node groups (the
    theme's icons are SVG too)."""
    svg_text = page.evaluate("() => [...document.querySelectorAll('svg g.node text')].map(t => t.textContent)"
                             ".join(' ')")
    found = []
    if expected and page.locator("svg:has(g.node)").count() == 0:
        found.append("no drawing (<svg>) on the page")
    missing = sorted(label for label in expected if label not in svg_text)
    if missing:
        found.append(f"drawings lack {missing}")
    scrolling = page.evaluate(SCROLLING)
    if scrolling:
        found.append(f"code blocks scroll sideways at {page.viewport_size['width']} px: {scrolling}")
    return found


def legibility(page, path):
    drawings = measure(page.locator("body"), f"site {path.stem} at {page.viewport_size['width']} px")
    return [p for d in drawings for p in d.problems()]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        """No line per request."""


@pytest.fixture(scope="module")
def site(built_site):
    handler = functools.partial(QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def page(site, browser):
    return browser.new_page(viewport={"width": WIDTH, "height": 1000})


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_every_page_has_its_drawings_no_errors_and_working_links(site, page, path):
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    url = urljoin(site, f"{path.stem}.html")
    assert page.goto(url).status == 200
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"{path.stem}.png")
    assert problems(page, expected_labels(path)) == []
    assert legibility(page, path) == []
    links = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
    internal = sorted({link.split("#")[0] for link in links if link.startswith(site)})
    broken = [link for link in internal if page.request.get(link).status != 200]
    assert broken == [] and errors == []


def test_the_home_page_leads_to_the_index_notebook(site, page):
    page.goto(site)
    page.wait_for_url("**/00-index.html")
    assert "Computational graphs in PyTorch: start here" in page.title()


def test_a_page_without_its_drawings_or_with_a_line_too_long_fails_the_check(site, page):
    path = PATHS[1]
    page.goto(urljoin(site, f"{path.stem}.html"))
    first = page.evaluate("() => document.querySelector('.cell_input pre').textContent.split('\\n')[0]")
    page.evaluate("() => document.querySelector('.cell_input pre').append('\\n# ' + 'x'.repeat(100))")
    found = problems(page, expected_labels(path))
    assert found == [f"code blocks scroll sideways at {WIDTH} px: [{first[:40]!r}]"]
    page.evaluate("() => document.querySelectorAll('svg').forEach(svg => svg.remove())")
    assert "no drawing" in problems(page, expected_labels(path))[0]


def test_drawings_forced_to_fit_their_column_fail_the_legibility_check(site, page):
    page.goto(urljoin(site, f"{PATHS[5].stem}.html"))
    page.add_style_tag(content="svg { min-width: 0 !important; width: 60px !important; }")
    assert legibility(page, PATHS[5]) != []


def test_widgets_show_their_stored_drawing_and_need_a_kernel_to_change(site, page):
    page.goto(urljoin(site, "01-dynamic-control-flow.html"))
    notes = page.locator(".kernel-note")
    said = notes.first.inner_text()
    assert notes.count() == 4 and "to move its controls, open the notebook on Binder or in Colab" in said
    assert "\n" not in said.strip() and notes.first.locator("a").count() == 2
    assert "use_extra_layer=True" in page.content()
    details = page.locator("details")          # each exercise's hint and solution, folded
    assert details.count() == 8
    assert not any(page.evaluate("() => [...document.querySelectorAll('details')].map(d => d.open)"))


def test_the_quiz_lists_its_choices(site, page):
    from helpers.lessons.nb06 import PRACTICE_QUESTION

    page.goto(urljoin(site, "06-practice-question.html"))
    listed = page.locator("ol.quiz-choices li").all_inner_texts()
    assert listed == [option.text for option in PRACTICE_QUESTION.options]


# What only a running kernel can use, which no page may show (tools/build/site.py leaves out the cells
# tagged kernel-only, the checks' stored outputs and the notebooks' navigation lines)
KERNEL_ONLY_TEXT = ("%reload_ext", "Set-up: run first", "Not answered yet", "run that cell",
                    "Your score", "ex.score()", "Tick and untick", "Tick the boxes", "Move the slider",
                    "Check your environment", "Open in Colab", "Contents</a> |",
                    "tools/build/")           # a maintainer's note: which tool does what


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_no_page_shows_what_only_a_kernel_can_use(built_site, path):
    html = (built_site / f"{path.stem}.html").read_text(encoding="utf-8")
    article = html.split('<article', 1)[-1].split('</article>', 1)[0]
    assert [phrase for phrase in KERNEL_ONLY_TEXT if phrase in article] == []


# The first screen, at a laptop's window and at a phone's width: the page's title and the first
# paragraph of its text, whole, without scrolling
SCREENS = {"1366x768": {"width": 1366, "height": 768}, "390 wide": {"width": 390, "height": 844}}
FIRST_SCREEN = """() => {
  const h1 = document.querySelector('article h1');
  const p = h1 && [...h1.parentElement.querySelectorAll(':scope > p')].find(p => p.textContent.trim());
  const box = e => e && e.getBoundingClientRect();
  const [t, f] = [box(h1), box(p)];
  return {title: t ? t.bottom : null, paragraph: f ? f.bottom : null, top: t ? t.top : null,
          height: window.innerHeight};
}"""


def first_screen_problems(page):
    seen = page.evaluate(FIRST_SCREEN)
    if seen["title"] is None or seen["paragraph"] is None:
        return ["no title, or no paragraph under it"]
    return [f"the {what} ends at {seen[what]:.0f} px, below the first screen's {seen['height']} px"
            for what in ("title", "paragraph") if seen[what] > seen["height"] or seen["top"] < 0]


@pytest.fixture
def screen_page(page):
    """`page`, at a window size the test sets; the usual size after."""
    yield page
    page.set_viewport_size({"width": WIDTH, "height": 1000})


@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_the_first_screen_shows_the_title_and_the_first_paragraph(site, screen_page, path, screen):
    """Also the legibility budget at a phone's width."""
    screen_page.set_viewport_size(SCREENS[screen])
    screen_page.goto(urljoin(site, f"{path.stem}.html"))
    assert first_screen_problems(screen_page) == []
    assert legibility(screen_page, path) == []


def test_a_first_screen_taken_by_something_else_fails_the_check(site, screen_page):
    page = screen_page
    page.set_viewport_size(SCREENS["1366x768"])
    page.goto(urljoin(site, f"{PATHS[1].stem}.html"))
    page.evaluate("() => document.querySelector('article h1').insertAdjacentHTML('afterend', "
                  "'<pre style=\"height: 900px\">58 lines of set-up</pre>')")
    found = first_screen_problems(page)
    assert len(found) == 1 and found[0].startswith("the paragraph ends at"), found


# ----- the launch links, read from the built HTML -----

NOTEBOOKS = {p.name for p in PATHS}
NOTEBOOKS_DIR = ROOT / "notebooks"
THEME_BINDER = "https://mybinder.org/v2/gh/{}/{}?urlpath=lab/tree/notebooks/{}"   # the theme's launch button


def launches(notebook):
    """The addresses that may open `notebook` on the fork's site: Binder (ours and the theme's), Colab, GitHub."""
    return {binder_url(notebook, FORK), THEME_BINDER.format(FORK, BRANCH, notebook), colab_url(notebook, FORK),
            f"{repository_url(FORK)}/blob/{BRANCH}/notebooks/{notebook}"}


ALLOWED = {repository_url(FORK), *(url for name in NOTEBOOKS for url in launches(name))}


def links(html):
    attributes = [dict(re.findall(r'([\w-]+)="([^"]*)"', tag)) for tag in re.findall(r"<a\s[^>]*>", html)]
    return [(unescape(a["href"]), a.get("class", "")) for a in attributes if a.get("href")]


def link_problems(href):
    """A Binder, Colab or repository link must open a notebook of notebooks/ in the fork at BRANCH, or name the fork."""
    url = urlsplit(href)
    launching = url.netloc in ("mybinder.org", "colab.research.google.com") or url.netloc == "github.com" and \
        "/".join(url.path.strip("/").split("/")[:2]) in (FORK, REPOSITORY)
    return [f"{href} is not {FORK} at {BRANCH} or a notebook of it"] if launching and href not in ALLOWED else []


def page_problems(html, page, sources):
    """Bad launch links on notebook `page`'s page, a missing launch, a wrong download."""
    found, shown = [], {href for href, _ in links(html)}
    for href, classes in links(html):
        found += link_problems(href)
        download = "download-source-button" in classes or href.startswith("_sources/")
        same = href == f"_sources/{page}" and (sources / page).read_bytes() == (NOTEBOOKS_DIR / page).read_bytes()
        if download and not same:
            found.append(f"the download {href} is not notebooks/{page}")
    needed = {"Binder": launches(page) - {colab_url(page, FORK)}, "Colab": {colab_url(page, FORK)},
              "repository": {repository_url(FORK)}, "download": {f"_sources/{page}"}}
    return found + [f"no {kind} link to {page}" for kind, hrefs in needed.items() if not shown & hrefs]


@pytest.mark.parametrize("page", sorted(NOTEBOOKS), ids=[Path(n).stem for n in sorted(NOTEBOOKS)])
def test_every_launch_link_names_the_sites_repository_its_branch_and_a_notebook(built_site, page):
    html = (built_site / page.replace(".ipynb", ".html")).read_text()
    assert page_problems(html, page, built_site / "_sources") == []


def test_pages_that_are_no_notebook_link_only_to_the_sites_repository(built_site):
    pages = sorted(p for p in built_site.glob("*.html") if p.stem + ".ipynb" not in NOTEBOOKS)
    assert pages, "the site has no search or index page"
    assert [(p.name, problem) for p in pages for href, _ in links(p.read_text())
            for problem in link_problems(href)] == []


def test_without_site_repository_the_site_names_helpers_project_repository(monkeypatch):
    monkeypatch.delenv("SITE_REPOSITORY", raising=False)
    assert site_repository() == REPOSITORY
    conf = runpy.run_path(str(ROOT / "site" / "conf.py"))["html_theme_options"]
    assert conf["repository_url"] == repository_url(REPOSITORY) and conf["repository_branch"] == BRANCH
    monkeypatch.setenv("SITE_REPOSITORY", FORK)
    conf = runpy.run_path(str(ROOT / "site" / "conf.py"))["html_theme_options"]
    assert conf["repository_url"] == repository_url(FORK) and site_repository() == FORK
