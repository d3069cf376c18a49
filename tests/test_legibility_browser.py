"""The legibility budget as rendered (tools/testkit/legibility.py): operation names
at least 11 CSS px and no text under 8 px, measured on the SVG text of
every Graphviz drawing in headless Chromium; and what a widget shows is
on screen.

- JupyterLab at 1366x768, a new learner's trusted working copy (`make
  lab`'s set-up): every notebook opened without running, its stored
  drawings and stored widget views measured, and nothing shown broken (an
  image that loaded nothing, a widget's broken-link glyph); then each
  notebook with widgets run, and every combination of the states of every
  registered widget's controls shown (`legibility.states`) and measured.
  At each, with the widget's controls scrolled to the top of the view,
  some of its drawing's labels are inside the visible part of the drawing
  box, every control is wholly on screen and nothing around the controls
  scrolls sideways (`widget_page.on_screen`), and a turn of the mouse
  wheel over the drawing scrolls the page, not the drawing
  (`widget_page.wheel_problems`). Screenshots of two of the largest views.
- The static site at 1280 and 390 px wide, every page.

A failure names the notebook, the drawing or widget state and what is
wrong. The same measurement fails on a site page whose drawings are
forced to fit their column."""

import functools
import http.server
import json
import threading
import time
from urllib.parse import urljoin

import nbformat
import pytest
from conftest import ROOT
from learner import chromium, new_learner
from test_site import QuietHandler

from helpers.lessons import of
from helpers.widgets import RUN_TO_USE
from tools.build.site import build
from tools.notebooks import notebook_paths
from tools.testkit.browser import NB, open_notebook, run_all, serve, stop
from tools.testkit.first_open import broken, notices, rendered, stored
from tools.testkit.legibility import measure, reached, smallest, states
from tools.testkit.widget_cells import cell_index
from tools.testkit.widget_page import on_screen, wheel_problems, widget_cell

ARTIFACTS = ROOT / "artifacts" / "screenshots"
PATHS = notebook_paths()
VIEWPORT = {"width": 1366, "height": 768}
SITE_WIDTHS = (1280, 390)
WINDOWING = "@jupyterlab/notebook-extension/tracker.jupyterlab-settings"
# Views shown in screenshots: (widget, caption words, file name).
SHOTS = (("sequence", "length 200", "(cut)", "legibility-01-sequence-cut-200.png"),
         ("length", "length 30", "(unrolled)", "legibility-05-length-unrolled-30.png"))


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def lab(browser, tmp_path_factory):
    """A new learner's JupyterLab; every cell kept in the page (no windowing)
    so each output can be measured without scrolling."""
    learner = new_learner(tmp_path_factory.mktemp("learner"))
    settings = learner.home / ".jupyter/lab/user-settings" / WINDOWING
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"windowingMode": "none", "kernelShutdown": True}))
    proc, info = serve(learner.copy, learner.home / "runtime", learner.env)
    try:
        yield learner, f"http://127.0.0.1:{info['port']}", info["token"]
    finally:
        stop(proc)


def first_open(page, folder, path, within=60.0):
    """Wait until the notebook shows what its file holds (or `within` s)."""
    expected = stored(nbformat.read(folder / path.name, as_version=4))
    deadline = time.monotonic() + within
    while rendered(page.locator(NB))[0] != expected and time.monotonic() < deadline:
        time.sleep(0.25)


def widget_states(page, path, timings):
    """Every combination of states of every registered widget of the
    notebook: its drawings measured, and the problems of what is on screen."""
    drawings, problems = [], []
    for widget in of(path.stem):
        cell = widget_cell(page, cell_index(path.stem, widget.tag))
        where = f"{path.stem}: {widget.name} as run"
        drawings += measure(cell.locator(".jp-OutputArea"), where)
        wheeled = [seen(page, cell, where, problems)]
        walked = time.perf_counter()
        changes = states(cell, widget)
        for change in changes:
            if not reached(page, cell, widget, change):
                continue
            caption = cell.locator("figcaption").first.inner_text() if cell.locator("figcaption").count() else ""
            where = f"{path.stem}: {widget.name} {change.control}={change.target or 'clicked'} [{caption[:70]}]"
            found = measure(cell.locator(".jp-OutputArea"), where)
            timings.append(f"legibility lab {found[0].where if found else widget.name}: {smallest(found)}")
            drawings += found
            wheeled.append(seen(page, cell, where, problems))
            screenshot(page, cell, widget.name, caption)
        timings.append(f"legibility lab {path.stem}: {widget.name}, {len(changes)} changes walked in "
                       f"{time.perf_counter() - walked:.1f} s, the wheel turned over {sum(wheeled)} of "
                       f"{len(wheeled)} states")
    return drawings, problems


def seen(page, cell, where, problems):
    """Add to `problems` what is wrong with what a learner sees of the
    widget in `cell`: its drawing, its controls, where the mouse wheel goes;
    True if the wheel was turned (a drawing in view, room to scroll)."""
    problems += on_screen(cell).problems(where)
    wheel = wheel_problems(page, cell, where)
    problems += wheel or []
    return wheel is not None


def screenshot(page, cell, name, caption):
    for widget, length, view, file in SHOTS:
        if name == widget and length in caption and view in caption:
            on_screen(cell)                   # its controls at the top of the view
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=ARTIFACTS / file)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_jupyterlab_drawings_and_widget_states_keep_the_budget(browser, lab, path, timings):
    learner, base, token = lab
    start = time.perf_counter()
    page = browser.new_page(viewport=VIEWPORT)
    try:
        open_notebook(page, base, token, path.name)
        page.locator(f"{NB} .jp-Cell").first.wait_for(timeout=90_000)
        first_open(page, learner.copy, path)
        drawings = measure(page.locator(NB), f"{path.stem}: stored")
        shown_broken = [f"{path.stem} on first open: {b}" for b in broken(page.locator(NB))]
        shown_broken += [f"{path.stem} on first open: a widget view's first line is {line}, not {RUN_TO_USE!r}"
                         for line in notices(page.locator(NB)) if RUN_TO_USE not in line]
        timings.append(f"legibility lab {path.stem} stored: {smallest(drawings)}")
        problems = []
        if of(path.stem):
            run_all(page, base, token, path.name)
            found, problems = widget_states(page, path, timings)
            drawings += found
    finally:
        page.close()
    timings.append(f"legibility lab {path.stem}: {time.perf_counter() - start:.1f} s")
    rules = {"operation names at least 11 px, no text under 8 px": [p for d in drawings for p in d.problems()],
             "a first open shows nothing broken (no image that loaded nothing, no widget's broken-link glyph) and "
             "says how to use a stored widget": shown_broken,
             "with a widget's controls at the top of the view, part of its drawing and all its controls are on "
             "screen, and the mouse wheel over the drawing scrolls the page": problems}
    failed = [f"{rule}:\n" + "\n".join(found) for rule, found in rules.items() if found]
    assert failed == [], "\n\n".join(failed)


@pytest.fixture(scope="module")
def site(browser, tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")    # staged apart: test_site.py may build at the same time
    out = build(folder / "site", source=folder / "source")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(out)))
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


FORCED = "svg { min-width: 0 !important; max-width: 100% !important; }"


def test_a_drawing_forced_to_fit_its_column_fails_the_budget(browser, site):
    """The measurement on 01's page at 390 px with every drawing allowed to
    shrink to the column (what the site did before its min-width)."""
    path = PATHS[1]
    problems = [p for d in site_drawings(browser, site, path, 390, FORCED) for p in d.problems()]
    assert problems and all(p.startswith(f"site {path.stem} at 390 px") for p in problems)
    assert any("operation names" in p for p in problems), problems
