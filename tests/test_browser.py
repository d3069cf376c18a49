"""Every notebook run in real JupyterLab in headless Chromium: Run All shows
no error except in cells marked to raise, and every widget redraws the
graph as it should when changed. Timings are printed at the end of the run."""

import os
from pathlib import Path

import nbformat
import pytest
from tools.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    NB,
    cells,
    change_and_wait,
    cleared,
    menu,
    open_notebook,
    panel_cell,
    press_on_slider,
    run_all,
    run_all_started,
    start_lab,
    stop,
)
from conftest import ROOT
from tools.nav import NOTEBOOKS, notebook_paths
from tools.run_notebooks import raises

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


def _redraw(page, timings, notebook, name, call, change, timeout=15.0):
    """Change one widget (in the cell whose source contains `call`) and
    return its new HTML; the time from the input event to the redraw,
    measured inside the page, is recorded."""
    cell = panel_cell(page, call)
    html, ms = change_and_wait(page, cell.locator(".widget-html-content"), lambda: change(cell), timeout)
    timings.append(f"{notebook}: {name}: input event to new drawing, in the page: {ms:.0f} ms")
    return html


def _widgets_01(page, timings):
    name = "01-dynamic-control-flow"
    html = _redraw(page, timings, name, "use_extra_layer checkbox", "widgets.Checkbox",
                   lambda cell: cell.locator(".widget-checkbox input").click())
    assert "AddBackward0" not in html and "use_extra_layer=False" in html
    html = _redraw(page, timings, name, "loop slider n", "partial(loop_view", press_on_slider(page))
    assert "n = 4: 8 operations, 9 autograd nodes, 18 boxes drawn" in html and html.count(">MulBackward0<") == 4
    html = _redraw(page, timings, name, "while slider x", "partial(while_view", press_on_slider(page, "End"))
    assert "x = 1000: 10 halvings, depth 10" in html and html.count(">DivBackward0<") == 10
    html = _redraw(page, timings, name, "sequence dropdown (rolled)", "partial(sequence_view",
                   lambda cell: cell.locator("select").select_option(label="sequence 4 (length 200)"))
    assert "length 200, 200 cell steps counted in its graph (rolled)" in html and "× 197 steps" in html
    html = _redraw(page, timings, name, "view: cut", "partial(sequence_view",
                   lambda cell: cell.locator("button", has_text="cut").click())
    assert "(cut)" in html and "more nodes not drawn" in html and 0 < html.count(">TanhBackward0<") < 20


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
    """A learner types a wrong answer, reads the hint aimed at it, then the right one."""
    text = _answer(page, "ex.q1.check(answer_1)", "answer_1 = 82", "Not quite")
    assert "82 is what the drawing shows" in text
    text = _answer(page, "ex.q1.check(answer_1)", "answer_1 = 41", "Right")
    assert "2 * 20 + 1" in text
    timings.append("01-dynamic-control-flow: exercise 1 answered in the page: hint, then right")


def _widgets_02(page, timings):
    html = _redraw(page, timings, "02-inspecting-the-graph", "backward step slider", "partial(step_view",
                   press_on_slider(page))
    assert "step 2 of 5: MulBackward0 receives 1" in html


def _widgets_05(page, timings):
    html = _redraw(page, timings, "05-interview-relevance", "length slider", "partial(length_view",
                   press_on_slider(page))
    assert "length 4, 4 cell steps counted" in html and html.count(">TanhBackward0<") == 4
    html = _redraw(page, timings, "05-interview-relevance", "length slider to 30", "partial(length_view",
                   press_on_slider(page, "End"))
    assert "length 30, 30 cell steps counted in its graph (rolled)" in html and "× 27 steps" in html


def _widgets_06(page, timings):
    name = "06-practice-question"

    def pick(words):
        return lambda cell: cell.locator(".widget-radio-box label", has_text=words).click()

    call = "partial(quiz_view"
    html = _redraw(page, timings, name, "quiz, wrong choice", call, pick("deleted the graph's nodes"))
    assert "Not quite. The nodes survive backward()" in html
    html = _redraw(page, timings, name, "quiz, right choice", call, pick("freed the tensors"))
    assert "Right. Backward frees the intermediate values" in html


def _widgets_07(page, timings):
    html = _redraw(page, timings, "07-autograd-from-scratch", "backward step slider", "partial(scratch_step_view",
                   press_on_slider(page))
    assert "step 2 of 4: the * node passes its grad 1 on to its inputs" in html


def _widgets_08(page, timings):
    name = "08-modules-and-the-graph"
    html = _redraw(page, timings, name, "freeze layer 0 checkbox", "partial(freeze_view",
                   lambda cell: cell.locator(".widget-checkbox input").first.click())
    assert "trainable: 2.weight, 2.bias; 2 AccumulateGrad leaves" in html
    html = _redraw(page, timings, name, "train() checkbox", "partial(mode_view",
                   lambda cell: cell.locator(".widget-checkbox input").click())
    assert "eval(): 7 operations recorded; BatchNorm running statistics unchanged" in html


WIDGETS = {
    "01-dynamic-control-flow": lambda page, timings: (_widgets_01(page, timings), _exercise_01(page, timings)),
    "02-inspecting-the-graph": _widgets_02,
    "05-interview-relevance": _widgets_05,
    "06-practice-question": _widgets_06,
    "07-autograd-from-scratch": _widgets_07,
    "08-modules-and-the-graph": _widgets_08,
}


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
        if path.stem in WIDGETS:
            WIDGETS[path.stem](page, timings)
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


def test_a_broken_callback_fails_the_check(lab, page, timings):
    root, base, token = lab
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(BROKEN)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "notebooks" / "broken.ipynb")
    run_all(page, base, token, "notebooks/broken.ipynb")
    with pytest.raises(AssertionError, match="did not redraw"):
        _redraw(page, timings, "broken", "slider", "panel(render", press_on_slider(page), timeout=3.0)


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
