"""Every notebook run in real JupyterLab in headless Chromium: Run All shows
no error except in cells marked to raise, and every widget redraws the
graph as it should when changed. Timings are printed at the end of the run."""

import os
from pathlib import Path

import nbformat
import pytest
from answers import WRONG
from conftest import ROOT

from helpers.exercises import declared
from helpers.lessons import of
from helpers.lessons.widget import Check, Widget, press
from tools.build.run_notebooks import raises
from tools.notebooks import NOTEBOOKS, notebook_paths
from tools.testkit.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    NB,
    cells,
    cleared,
    menu,
    open_notebook,
    run_all,
    run_all_started,
    start_lab,
    stop,
)
from tools.testkit.widget_cells import cell_index
from tools.testkit.widget_page import redraw, widget_cell

ARTIFACTS = ROOT / "artifacts" / "screenshots"
PATHS = notebook_paths()
VIEWPORT = {"width": 1400, "height": 1000}
INSTALL = "browser tests need Debian's chromium: sudo apt-get install chromium (make test installs it when it can)"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(INSTALL)
        pytest.skip(INSTALL)
    root = tmp_path_factory.mktemp("lab")
    proc, base, token = start_lab(root, NOTEBOOKS)
    try:
        yield root, base, token
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def browser(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport=VIEWPORT)
    yield page
    page.close()


class NotebookPages:
    """Pages on the notebooks: `take(path)` gives the page for `path`
    (opened now, or earlier by `open_next`); `open_next(path)` starts
    loading the following notebook, and its kernel, while the test of
    `path` goes on (about 4 s a notebook that would otherwise be waited)."""

    def __init__(self, browser, base, token):
        self.browser, self.base, self.token, self.opened = browser, base, token, {}

    def take(self, path):
        return self.opened.pop(path) if path in self.opened else self._open(path)

    def open_next(self, path):
        following = PATHS[PATHS.index(path) + 1:]
        if following and following[0] not in self.opened:
            self.opened[following[0]] = self._open(following[0])

    def _open(self, path):
        page = self.browser.new_page(viewport=VIEWPORT)
        open_notebook(page, self.base, self.token, f"notebooks/{path.name}")
        return page


@pytest.fixture(scope="module")
def notebook_pages(lab, browser):
    _, base, token = lab
    pages = NotebookPages(browser, base, token)
    yield pages
    for page in pages.opened.values():
        page.close()


def check_widgets(page, timings, notebook, declared=None, folder=NOTEBOOKS):
    """Make each registered widget's checked changes in the page, in order,
    and assert on what each redraw shows (caption, drawing, no error); the
    time from the input event to the redraw, measured inside the page, is
    recorded."""
    for widget in of(notebook, declared):
        cell = widget_cell(page, cell_index(notebook, widget.tag, folder))
        for check in widget.checks:
            shown, ms = redraw(page, cell, widget, check.change)
            change = check.change
            timings.append(f"{notebook}: {widget.name}: {change.action} {change.control} {change.target}: "
                           f"input event to new drawing, in the page: {ms:.0f} ms")
            found = check.problems(shown)
            assert not found, f"{widget.tag} after {change}: " + "; ".join(found)


def _answer(page, check, answer, expected):
    """Type `answer` into the answer slot above the cell whose source is
    `check`, run both cells with Shift+Enter, and return the check's text."""
    index = page.evaluate(f"""() => [...document.querySelectorAll('{NB} .jp-CodeCell .cm-content')]
                                     .findIndex(e => e.innerText.trim() === {check!r})""")
    assert index > 0, f"no cell {check!r}"
    cells = page.locator(f"{NB} .jp-CodeCell")
    cells.nth(index - 1).locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.type(answer)
    page.keyboard.press("Shift+Enter")
    page.keyboard.press("Shift+Enter")
    output = cells.nth(index).locator(".jp-OutputArea-output")
    page.wait_for_function("([el, words]) => el && el.innerText.includes(words)",
                           arg=[output.element_handle(timeout=15_000), expected], timeout=15_000)
    return output.inner_text()


def _exercise_01(page, timings):
    """A learner types a wrong answer, reads the hint aimed at it, then the
    right one (both taken from the declarations, so they follow the exercise)."""
    wrong, words = WRONG[("01", 1)][0]
    text = _answer(page, "ex.q1.check(answer_1)", wrong, "Not quite")
    assert words in text
    text = _answer(page, "ex.q1.check(answer_1)", declared("01")[0].solution.strip(), "Right")
    assert text.startswith("Right")
    timings.append("01-dynamic-control-flow: exercise 1 answered in the page: hint, then right")


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_run_all_then_widgets(lab, notebook_pages, path, timings):
    _, base, token = lab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = notebook_pages.take(path)
    try:
        seconds, clicks = run_all(page, base, token, f"notebooks/{path.name}")
    finally:
        page.screenshot(path=ARTIFACTS / f"{path.stem}.png")
    timings.append(f"{path.stem}: Run All {seconds:.1f} s, {clicks} click{'s' if clicks > 1 else ''}")
    notebook_pages.open_next(path)         # loads while this notebook's widgets are checked
    report = cells(page)
    stored = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    assert len(report) == len(stored)
    unexpected = [c["source"].splitlines()[0] for c, cell in zip(report, stored, strict=True)
                  if c["stderr"] != raises(cell)]
    assert unexpected == []
    try:
        check_widgets(page, timings, path.stem)
        if path.stem == "01-dynamic-control-flow":
            _exercise_01(page, timings)
    finally:
        page.close()


BROKEN = '''
import ipywidgets as widgets
from helpers import panel

calls = []

def render(n):
    calls.append(n)
    if len(calls) > 1:
        raise RuntimeError("a broken callback")
    return f"<p>n = {n}</p>"

panel(render, n=widgets.IntSlider(value=1, min=0, max=5))
'''
BROKEN_WIDGET = Widget("broken", {"n": "IntSlider"}, (Check(press("n"), "n = 2"),), {}, notebook="broken")


def test_a_broken_callback_fails_the_check(lab, page, timings):
    """A view that raises on a change shows the error in the widget, in
    place of the drawing, naming the learner's cell; the widget check fails
    on it."""
    root, base, token = lab
    cell = nbformat.v4.new_code_cell(BROKEN.strip(), metadata={"tags": [BROKEN_WIDGET.tag]})
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "notebooks" / "broken.ipynb")
    run_all(page, base, token, "notebooks/broken.ipynb")
    with pytest.raises(AssertionError) as failed:
        check_widgets(page, timings, "broken", (BROKEN_WIDGET,), root / "notebooks")
    words = ["the view raised instead of drawing: No drawing for n=2: the view raised an error.",
             "RuntimeError: a broken callback", "Cell In[1], line 9, in render"]
    assert all(w in str(failed.value) for w in words), str(failed.value)


def test_a_run_all_that_queues_nothing_is_told_apart(lab, page):
    """The check behind run_all's second click: a cleared notebook whose
    cells were not sent is not "started"; after Run All it is."""
    root, base, token = lab
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('one')")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "notebooks" / "queued.ipynb")
    cleared(page, base, token, "notebooks/queued.ipynb")
    assert not run_all_started(page, within=1)
    menu(page, "Run", "Run All Cells")
    assert run_all_started(page, within=30)
