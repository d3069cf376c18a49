"""The legibility budget as rendered (tools/testkit/legibility.py): operation names
at least 11 CSS px and no text under 8 px, measured on the SVG text of
every Graphviz drawing in headless Chromium; and what a widget shows is
on screen.

- JupyterLab at 1366x768, a new learner's trusted working copy (`make
  lab`'s set-up): measured in tests/test_browser.py, on the one page per
  notebook that the browser layer opens and runs. On first open, without
  running, its stored drawings and stored widget views measured, and
  nothing shown broken (an image that loaded nothing, a widget's
  broken-link glyph); after its Run All, every combination of the states
  of every registered widget's controls shown (`legibility.states`) and
  measured. At each, with the widget's controls scrolled to the top of the
  view, some of its drawing's labels are inside the visible part of the
  drawing box, every control is wholly on screen and nothing around the
  controls scrolls sideways (`widget_page.on_screen`), and a turn of the
  mouse wheel over the drawing scrolls the page, not the drawing
  (`widget_page.wheel_problems`). Screenshots of two of the largest views.
- The static site at 1280 and 390 px wide, every page (here).

A failure names the notebook, the drawing or widget state and what is
wrong. The same measurement fails on a site page whose drawings are
forced to fit their column."""

import functools
import http.server
import threading
from urllib.parse import urljoin

import pytest
from learner import chromium
from test_site import QuietHandler

from tools.notebooks import notebook_paths
from tools.testkit.legibility import measure, smallest

PATHS = notebook_paths()
SITE_WIDTHS = (1280, 390)


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def site(browser, built_site):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(QuietHandler, directory=str(built_site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


def site_drawings(browser, site, path, width, style=""):
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(urljoin(site, f"{path.stem}.html"))
        if style:
            page.add_style_tag(content=style)
        return measure(page.locator("body"), f"site {path.stem} at {width} px")
    finally:
        page.close()


@pytest.mark.parametrize("width", SITE_WIDTHS)
def test_site_drawings_keep_the_budget(browser, site, width, timings):
    drawings = []
    for path in PATHS:
        found = site_drawings(browser, site, path, width)
        timings.append(f"legibility site {path.stem} at {width} px: {smallest(found)}")
        drawings += found
    problems = [p for d in drawings for p in d.problems()]
    assert problems == [], "\n".join(problems)
