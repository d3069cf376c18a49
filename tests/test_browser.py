"""Every notebook in real JupyterLab in headless Chromium (1366x768), as a new learner has it: first open, one
Run All, every widget's checks and states, the keyboard, 200 % zoom."""

import time

import nbformat
import pytest
from answers import WRONG
from conftest import ROOT
from learner import VIEWPORT, attached, kernel_of, served

from helpers.exercises import declared
from helpers.lessons import of
from helpers.widgets import RUN_TO_USE
from tools.build.run_notebooks import raises
from tools.notebooks import notebook_paths
from tools.testkit.browser import CELLS, NB, open_notebook, run_all
from tools.testkit.first_open import BROKEN, NOTICES, output_count, rendered, stored
from tools.testkit.legibility import measure, reached, states
from tools.testkit.widget_cells import cell_index
from tools.testkit.widget_page import keyboard_problems, on_screen_problems, redraw, wheel_problems, widget_cell

ARTIFACTS = ROOT / "artifacts" / "screenshots"
PATHS = notebook_paths()
ZOOMED = {"width": 683, "height": 384}          # 1366x768 at 200 % zoom, in CSS pixels (what lays a page out)
WINDOWING = "@jupyterlab/notebook-extension/tracker.jupyterlab-settings"
TAB = "#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current"      # the notebook's tab
MODEL_NOT_FOUND = "Error displaying widget: model not found"
RELOADS = 2               # notebooks of a run whose first open may be loaded again (check_first_open)
RELOADED = []
NEWS = "notified about official Jupyter news"
SHOWN_WITHIN = 150.0         # seconds to wait for stored outputs (60 s was passed on 2 cores busy with two suites)
# Views shown in screenshots: (widget, caption words, file name).
SHOTS = (("sequence", "length 200", "(cut)", "legibility-01-sequence-cut-200.png"),
         ("length", "length 30", "(unrolled)", "legibility-05-length-unrolled-30.png"))


@pytest.fixture(scope="module")
def lab(browser, tmp_path_factory):
    """No windowing, so that every output can be measured; (copy, URL, token, info)."""
    settings = {WINDOWING: {"windowingMode": "none", "kernelShutdown": True}}
    with served(tmp_path_factory.mktemp("learner"), settings=settings) as (learner, info, _):
        yield learner.copy, f"http://127.0.0.1:{info['port']}", info["token"], info


def check_widgets(page, timings, notebook):
    for widget in of(notebook):
        cell = widget_cell(page, cell_index(notebook, widget.tag))
        for check in widget.checks:
            shown, ms = redraw(page, cell, widget, check.change)
            change = check.change
            timings.append(f"{notebook}: {widget.name}: {change.action} {change.control} {change.target}: "
                           f"input event to new drawing, in the page: {ms:.0f} ms")
            found = check.problems(shown)
            assert not found, f"{widget.tag} after {change}: " + "; ".join(found)


def _answer(page, check, answer, expected):
    """Type `answer` into the slot above the cell whose source is `check`, run both; return the check's text."""
    index = page.evaluate(f"""() => [...document.querySelectorAll('{NB} .jp-CodeCell')]
                                     .findIndex(c => (c.querySelector('.cm-content') || {{innerText: ''}})
                                                     .innerText.trim() === {check!r})""")
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
    """A wrong answer and its hint, then the right one."""
    wrong, words = WRONG[("01", 1)][0]
    text = _answer(page, "ex.q1.check(answer_1)", wrong, "Not quite")
    assert words in text
    text = _answer(page, "ex.q1.check(answer_1)", declared("01")[0].solution.strip(), "Right")
    assert text.startswith("Right")
    timings.append("01-dynamic-control-flow: exercise 1 answered in the page: hint, then right")


def shows(page, folder, path, within=SHOWN_WITHIN):
    """(stored, shown, (outputs in file, in page), failed texts) once the page matches the file or `within` passes."""
    nb = nbformat.read(folder / path, as_version=4)
    expected, outputs = stored(nb), output_count(nb)
    deadline = time.monotonic() + within
    while True:
        shown, in_page, failed = rendered(page.locator(NB))
        if (shown, in_page) == (expected, outputs) or time.monotonic() > deadline:
            return expected, shown, (outputs, in_page), failed
        time.sleep(0.25)


def check_first_open(page, folder, info, name, timings):
    """JupyterLab can draw a widget before reading the stored state ("model not found" for good), more often on a busy
    machine: then the page is loaded once more, as docs/troubleshooting.md tells a learner, for at most RELOADS."""
    start = time.perf_counter()
    expected, shown, (outputs, in_page), failed = shows(page, folder, name)
    if shown != expected and failed and set(failed) == {MODEL_NOT_FOUND}:
        RELOADED.append(name)
        assert len(RELOADED) <= RELOADS, (
            f"{', '.join(RELOADED)} each showed {MODEL_NOT_FOUND!r} on a first open: a learner would see it")
        timings.append(f"first open of {name}: a widget said {MODEL_NOT_FOUND!r}; the page was loaded again")
        page.reload()
        page.locator(f"#jp-main-dock-panel .lm-TabBar-tab:has-text('{name}')").click(timeout=90_000)
        page.locator(f"{NB} .jp-Cell").first.wait_for(timeout=90_000)
        expected, shown, (outputs, in_page), failed = shows(page, folder, name)
    timings.append(f"first open of {name}: stored outputs drawn in {time.perf_counter() - start:.1f} s")
    assert in_page == outputs, f"{name} has {outputs} outputs, the page shows {in_page}"
    assert not failed, f"{name}: outputs that failed in the page: {failed}"
    assert shown == expected, (
        f"{name} shows {shown}, its stored outputs hold {expected}; outputs that failed: {failed}. A notebook's "
        "stored drawings and widget views must show on a first open, before anything runs. If this fails again "
        f"when run alone (pytest tests/test_browser.py -k '{name[:-6]}'), re-execute the notebook (make notebooks) "
        "so that its widget state is stored")
    kernel_of(info, name, attached)              # a connecting kernel is what could mark it changed
    assert page.get_by_text(NEWS).count() == 0, "the news pop-up is showing"
    assert page.locator(f"{TAB}.jp-mod-dirty").count() == 0, (
        f"opening {name} marked it changed (do its kernelspec and language_info equal what the collection's kernel, "
        "tools/runtime/kernel.py, reports?): closing it would ask to save")


def widget_states(page, path, timings):
    """Every combination of states of the notebook's widgets: (drawings measured, problems on screen)."""
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
            drawings += measure(cell.locator(".jp-OutputArea"), where)
            wheeled.append(seen(page, cell, where, problems))
            screenshot(page, cell, widget.name, caption)
        timings.append(f"legibility lab {path.stem}: {widget.name}, {len(changes)} changes walked in "
                       f"{time.perf_counter() - walked:.1f} s, the wheel turned over {sum(wheeled)} of "
                       f"{len(wheeled)} states")
    return drawings, problems


def at_200_percent(page, path, views):
    """The controls out of reach at 200 % zoom (file browser open); `views`: stored or live."""
    if not of(path.stem):
        return []
    page.set_viewport_size(ZOOMED)
    # JupyterLab lays its panels out again on the resize event, in a later frame: read them once they fit
    page.wait_for_function("() => document.querySelector('#jp-main-dock-panel').getBoundingClientRect().right"
                           " <= innerWidth + 1", timeout=30_000, polling="raf")
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    try:
        found = []
        for widget in of(path.stem):
            found += on_screen_problems(widget_cell(page, cell_index(path.stem, widget.tag)),
                                        f"{path.stem}: {widget.name}'s {views} view at 200 %", labels=False)
        return found
    finally:
        page.set_viewport_size(VIEWPORT)
        # the notebook's toolbar moves what does not fit at 683 px into its "more" menu, and
        # takes a moment to lay itself out again: Run All waits for its kernel indicator
        page.locator(f"{NB} .jp-Notebook-ExecutionIndicator").first.wait_for(state="visible", timeout=30_000)


def seen(page, cell, where, problems):
    """Add to `problems` what is wrong with the widget's drawing, controls and wheel; True if the wheel turned."""
    problems += on_screen_problems(cell, where)
    wheel = wheel_problems(page, cell, where)
    problems += wheel or []
    return wheel is not None


def screenshot(page, cell, name, caption):
    for widget, length, view, file in SHOTS:
        if name == widget and length in caption and view in caption:
            on_screen_problems(cell, name)    # its controls at the top of the view
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=ARTIFACTS / file)


def on_first_open(page, folder, info, path, timings):
    """(drawings measured, what shows broken) before anything runs, every stored output shown."""
    page.locator(f"{NB} .jp-Cell").first.wait_for(timeout=90_000)
    check_first_open(page, folder, info, path.name, timings)
    drawings = measure(page.locator(NB), f"{path.stem}: stored")
    shown_broken = [f"{path.stem} on first open: {b}" for b in page.locator(NB).evaluate(BROKEN)]
    shown_broken += [f"{path.stem} on first open: a widget view's first line is {line}, not {RUN_TO_USE!r}"
                     for line in page.locator(NB).evaluate(NOTICES) if RUN_TO_USE not in line]
    return drawings, shown_broken


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_first_open_run_all_widgets_and_their_states(lab, browser, path, timings):
    folder, base, token, info = lab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    page = browser.new_page(viewport=VIEWPORT)
    try:
        open_notebook(page, base, token, path.name)
        drawings, shown_broken = on_first_open(page, folder, info, path, timings)
        zoomed = at_200_percent(page, path, "stored")
        try:
            seconds = run_all(page, base, token, path.name)
        finally:
            page.screenshot(path=ARTIFACTS / f"{path.stem}.png")
        timings.append(f"{path.stem}: Run All {seconds:.1f} s, one click")
        report = page.evaluate(CELLS)
        code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        assert len(report) == len(code)
        unexpected = [(c["source"] or c["placeholder"] or "?").splitlines()[0]
                      for c, cell in zip(report, code, strict=True) if c["stderr"] != raises(cell)]
        assert unexpected == []
        # the set-up cell shows its title line only (its input hidden: metadata jupyter.source_hidden)
        assert (report[0]["placeholder"], report[0]["source"]) == (code[0].source.splitlines()[0], ""), report[0]
        check_widgets(page, timings, path.stem)
        if path.stem == "01-dynamic-control-flow":
            _exercise_01(page, timings)
        found, problems = widget_states(page, path, timings)
        drawings += found
        keyboard = keyboard_problems(page, path.stem, folder)
        zoomed += at_200_percent(page, path, "live")
    finally:
        page.close()
    took = time.perf_counter() - start
    timings.append(f"browser {path.stem}: first open, Run All, checks and states in {took:.1f} s")
    rules = {"operation names at least 11 px, no text under 8 px": [p for d in drawings for p in d.problems()],
             "a first open shows nothing broken (no image that loaded nothing, no widget's broken-link glyph) and "
             "says how to use a stored widget": shown_broken,
             "with a widget's controls at the top of the view, part of its drawing and all its controls are on "
             "screen, and the mouse wheel over the drawing scrolls the page": problems,
             "every control works with the keyboard alone (one key on its focused element redraws)": keyboard,
             "at 200 % zoom on a 1366x768 screen every control of every widget is wholly on screen with the controls "
             "at the top of the view": zoomed}
    failed = [f"{rule}:\n" + "\n".join(found) for rule, found in rules.items() if found]
    assert failed == [], "\n\n".join(failed)
