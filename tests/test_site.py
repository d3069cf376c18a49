"""The static site: built from the stored notebooks (nothing executed),
served on 127.0.0.1 and opened page by page in headless Chromium: no console
errors, every drawing present as inline SVG holding the node names the
notebook's stored drawings name, every internal link resolving, no code
block scrolling sideways in a window 1280 pixels wide. A page that lost its
drawings, or holds a code line too long, must fail the same check."""

import functools
import http.server
import os
import re
import threading
from pathlib import Path
from urllib.parse import urljoin

import nbformat
import pytest
from conftest import ROOT

from tools.notebooks import notebook_paths
from tools.testkit.browser import CHROMIUM, CHROMIUM_ARGS

ARTIFACTS = ROOT / "artifacts" / "site"
PATHS = notebook_paths()
# this file's own staging folder: make site and the other site tests stage elsewhere
OP = re.compile(r"^n\d+ op: ([^\s,|]+)", re.M)  # "MulBackward0 | ...", or "mul, shape (2,)" in an FX graph
WIDTH = 1280      # a laptop's window: what tests/structure.py's LINE_LIMIT is measured for
# Code the learner reads (code cells, markdown code blocks, folded solutions)
# that scrolls sideways; printed outputs are left out.
SCROLLING = """() => [...document.querySelectorAll('article pre')]
  .filter(pre => !pre.closest('.cell_output') && pre.scrollWidth > pre.clientWidth)
  .map(pre => pre.textContent.trim().split('\\n')[0].slice(0, 40))"""


def expected_labels(path):
    """The operation names in the notebook's stored drawings (their text form)."""
    nb = nbformat.read(path, as_version=4)
    text = "".join(o.get("data", {}).get("text/plain", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.outputs if "<svg" in o.get("data", {}).get("image/svg+xml", "")
                   or "<svg" in o.get("data", {}).get("text/html", ""))
    return set(OP.findall(text))


def problems(page, expected):
    """What is wrong with the open page: drawings missing or lacking names,
    code that scrolls sideways."""
    # a Graphviz drawing is an <svg> whose groups have class "node" (the theme's icons are SVG too)
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


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        """No line per request in the test output."""


@pytest.fixture(scope="module")
def site(built_site):
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail("the site test needs Debian's chromium")
        pytest.skip("the site test needs Debian's chromium (sudo apt-get install chromium)")
    handler = functools.partial(QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def page(site):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = chromium.new_page(viewport={"width": WIDTH, "height": 1000})
        yield page
        chromium.close()


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
    links = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
    internal = sorted({link.split("#")[0] for link in links if link.startswith(site)})
    broken = [link for link in internal if page.request.get(link).status != 200]
    assert broken == [] and errors == []


def test_the_home_page_leads_to_the_index_notebook(site, page):
    page.goto(site)
    page.wait_for_url("**/00-index.html")
    assert "Computational graphs in PyTorch: start here" in page.title()


def test_a_page_without_its_drawings_fails_the_check(site, page):
    path = PATHS[1]
    page.goto(urljoin(site, f"{path.stem}.html"))
    page.evaluate("() => document.querySelectorAll('svg').forEach(svg => svg.remove())")
    found = problems(page, expected_labels(path))
    assert found and "no drawing" in found[0]


def test_a_code_line_too_long_fails_the_check(site, page):
    path = PATHS[1]
    page.goto(urljoin(site, f"{path.stem}.html"))
    first = page.evaluate("() => document.querySelector('.cell_input pre').textContent.split('\\n')[0]")
    page.evaluate("() => document.querySelector('.cell_input pre').append('\\n# ' + 'x'.repeat(100))")
    found = problems(page, expected_labels(path))
    assert found == [f"code blocks scroll sideways at {WIDTH} px: [{first[:40]!r}]"]


def test_widgets_show_their_stored_drawing_and_need_a_kernel_to_change(site, page):
    page.goto(urljoin(site, "01-dynamic-control-flow.html"))
    notes = page.locator(".kernel-note")
    said = notes.first.inner_text()
    assert notes.count() == 4 and "to move its controls, open the notebook on Binder or in Colab" in said
    assert "\n" not in said.strip() and notes.first.locator("a").count() == 2
    assert "use_extra_layer=True" in page.content()


def test_exercises_keep_hints_and_solutions_folded(site, page):
    page.goto(urljoin(site, "01-dynamic-control-flow.html"))
    details = page.locator("details")
    assert details.count() == 8
    assert not any(page.evaluate("() => [...document.querySelectorAll('details')].map(d => d.open)"))


def downloaded(site, page, path):
    """The bytes the page's download button for the .ipynb gives (the
    theme's download menu; the launch links to Binder and Colab name the
    notebook too)."""
    page.goto(urljoin(site, f"{path.stem}.html"))
    links = page.evaluate("() => [...document.querySelectorAll('a[href$=\".ipynb\"]')].map(a => a.href)"
                          ".filter(href => href.startsWith(location.origin))")
    assert len(set(links)) == 1, f"download links on {path.stem}: {links}"
    return page.request.get(links[0]).body()


def download_problems(got, path):
    return [] if got == path.read_bytes() else [f"the download of {path.stem} is not notebooks/{path.name}"]


@pytest.mark.parametrize("path", PATHS[5:7], ids=[p.stem for p in PATHS[5:7]])
def test_the_download_button_gives_the_stored_notebook(site, page, path):
    assert download_problems(downloaded(site, page, path), path) == []


def test_the_staged_copy_fails_the_download_check(built_site):
    """What the button gave before: the staged copy (answers folded, widget state dropped)."""
    staged = built_site.parent / "source" / PATHS[6].name
    assert download_problems(staged.read_bytes(), PATHS[6]) == [f"the download of {PATHS[6].stem} is not "
                                                                f"notebooks/{PATHS[6].name}"]


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


def kernel_only_text(text):
    """The phrases of KERNEL_ONLY_TEXT in `text` (a page's visible text or its HTML)."""
    return [phrase for phrase in KERNEL_ONLY_TEXT if phrase in text]


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_no_page_shows_what_only_a_kernel_can_use(built_site, path):
    html = (built_site / f"{path.stem}.html").read_text(encoding="utf-8")
    article = html.split('<article', 1)[-1].split('</article>', 1)[0]
    assert kernel_only_text(article) == []


def test_kernel_only_text_is_caught():
    """What a page held before: the score, a check's placeholder, a widget's instructions."""
    found = kernel_only_text("<p>Tick and untick it</p><pre>Your score this session: 0 of 2</pre>"
                             "<pre>Not answered yet: replace ____ with your answer, then run that cell</pre>")
    assert found == ["Not answered yet", "run that cell", "Your score", "Tick and untick"]


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
    """The page fixture's page, at a window size a test sets; the usual size after."""
    yield page
    page.set_viewport_size({"width": WIDTH, "height": 1000})


@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_the_first_screen_shows_the_title_and_the_first_paragraph(site, screen_page, path, screen):
    page = screen_page
    page.set_viewport_size(SCREENS[screen])
    page.goto(urljoin(site, f"{path.stem}.html"))
    assert first_screen_problems(page) == []


def test_a_first_screen_taken_by_something_else_fails_the_check(site, screen_page):
    page = screen_page
    page.set_viewport_size(SCREENS["1366x768"])
    page.goto(urljoin(site, f"{PATHS[1].stem}.html"))
    page.evaluate("() => document.querySelector('article h1').insertAdjacentHTML('afterend', "
                  "'<pre style=\"height: 900px\">58 lines of set-up</pre>')")
    found = first_screen_problems(page)
    assert len(found) == 1 and found[0].startswith("the paragraph ends at"), found
