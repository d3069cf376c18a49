"""Every notebook once in real JupyterLab in headless Chromium, as a new
learner has it (`make lab`'s trusted working copy, 1366x768, every cell kept
in the page). On first open, before anything runs: its stored drawings keep
the legibility budget, nothing shows broken, every widget says how to use it.
Then one Run All: no error outside the cells tagged to raise; every widget's
declared checks redraw as declared; every combination of its controls'
states keeps the budget and stays on screen, and the wheel scrolls the page;
each control works with one key press. At 200 % zoom (683x384 CSS px), before
and after the run, every control is on screen."""

import json
import time

import nbformat
import pytest
from answers import WRONG
from conftest import ROOT
from learner import chromium, new_learner

from helpers.exercises import declared
from helpers.lessons import of
from helpers.widgets import RUN_TO_USE
from tools.build.run_notebooks import raises
from tools.notebooks import notebook_paths
from tools.testkit.browser import NB, cells, open_notebook, run_all, serve, stop
from tools.testkit.first_open import broken, notices, rendered, stored
from tools.testkit.legibility import measure, reached, smallest, states
from tools.testkit.widget_cells import cell_index
from tools.testkit.widget_page import keyboard_problems, on_screen, redraw, wheel_problems, widget_cell

ARTIFACTS = ROOT / "artifacts" / "screenshots"
PATHS = notebook_paths()
VIEWPORT = {"width": 1366, "height": 768}
ZOOMED = {"width": 683, "height": 384}          # 1366x768 at 200 % zoom, in CSS pixels (what lays a page out)
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
    """A new learner's JupyterLab on their working copy; every cell kept in
    the page (no windowing) so each output can be measured without
    scrolling. Yields (the working copy, base URL, token)."""
    learner = new_learner(tmp_path_factory.mktemp("learner"))
    settings = learner.home / ".jupyter/lab/user-settings" / WINDOWING
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"windowingMode": "none", "kernelShutdown": True}))
    proc, info = serve(learner.copy, learner.home / "runtime", learner.env)
    try:
        yield learner.copy, f"http://127.0.0.1:{info['port']}", info["token"]
    finally:
        stop(proc)


def check_widgets(page, timings, notebook):
    """Make each registered widget's checked changes in the page, in order,
    and assert on what each redraw shows (caption, drawing, no error); the
    time from the input event to the redraw, measured inside the page, is
    recorded."""
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
    """Type `answer` into the answer slot above the cell whose source is
    `check`, run both cells with Shift+Enter, and return the check's text."""
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
    """A learner types a wrong answer, reads the hint aimed at it, then the
    right one (both taken from the declarations, so they follow the exercise)."""
    wrong, words = WRONG[("01", 1)][0]
    text = _answer(page, "ex.q1.check(answer_1)", wrong, "Not quite")
    assert words in text
    text = _answer(page, "ex.q1.check(answer_1)", declared("01")[0].solution.strip(), "Right")
    assert text.startswith("Right")
    timings.append("01-dynamic-control-flow: exercise 1 answered in the page: hint, then right")


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


def at_200_percent(page, path, views):
    """What of each widget's controls a learner at 200 % zoom cannot reach:
    the `views` ("stored", before anything runs, or "live", after Run All)
    laid out in 683x384 CSS pixels, the file browser open beside the notebook
    as JupyterLab first shows it, each widget scrolled so its controls are at
    the top of the view."""
    if not of(path.stem):
        return []
    page.set_viewport_size(ZOOMED)
    try:
        found = []
        for widget in of(path.stem):
            seen = on_screen(widget_cell(page, cell_index(path.stem, widget.tag)))
            found += [f"{path.stem}: {widget.name}'s {views} view at 200 %: control {c!r} not wholly on screen"
                      for c in seen.hidden_controls]
            found += [f"{path.stem}: {widget.name}'s {views} view at 200 %: {s} scrolls sideways"
                      for s in seen.sideways]
        return found
    finally:
        page.set_viewport_size(VIEWPORT)
        # the notebook's toolbar moves what does not fit at 683 px into its "more" menu, and
        # takes a moment to lay itself out again: Run All waits for its kernel indicator
        page.locator(f"{NB} .jp-Notebook-ExecutionIndicator").first.wait_for(state="visible", timeout=30_000)


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


def on_first_open(page, folder, path, timings):
    """(drawings measured, what shows broken) before anything runs."""
    page.locator(f"{NB} .jp-Cell").first.wait_for(timeout=90_000)
    first_open(page, folder, path)
    drawings = measure(page.locator(NB), f"{path.stem}: stored")
    shown_broken = [f"{path.stem} on first open: {b}" for b in broken(page.locator(NB))]
    shown_broken += [f"{path.stem} on first open: a widget view's first line is {line}, not {RUN_TO_USE!r}"
                     for line in notices(page.locator(NB)) if RUN_TO_USE not in line]
    timings.append(f"legibility lab {path.stem} stored: {smallest(drawings)}")
    return drawings, shown_broken


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_first_open_run_all_widgets_and_their_states(lab, browser, path, timings):
    folder, base, token = lab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    page = browser.new_page(viewport=VIEWPORT)
    try:
        open_notebook(page, base, token, path.name)
        drawings, shown_broken = on_first_open(page, folder, path, timings)
        zoomed = at_200_percent(page, path, "stored")
        try:
            seconds = run_all(page, base, token, path.name)
        finally:
            page.screenshot(path=ARTIFACTS / f"{path.stem}.png")
        timings.append(f"{path.stem}: Run All {seconds:.1f} s, one click")
        report = cells(page)
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
