"""In JupyterLab: a saved notebook reopens with a drawing in every widget after its kernel is gone, and after
`make refresh` (02 stands for every widget notebook: all are `panel`s); a stale tab's Overwrite keeps what the
other tab saved."""

import os
import subprocess
import sys
import time

import nbformat
import pytest
from learner import TAB, VIEWPORT, attached, close_tab, end_sessions, kernel_of, lab_page, served, until

from helpers.lessons import of
from tools.notebooks import WIDGET_VIEW, widget_state
from tools.runtime.lab import ROOT
from tools.testkit.browser import NB, run_all
from tools.testkit.first_open import graphviz_svgs
from tools.testkit.widget_cells import cell_index
from tools.testkit.widget_page import redraw, widget_cell

LESSON = "02-inspecting-the-graph"
NAME = f"{LESSON}.ipynb"
SHOWN_WITHIN = 60.0             # seconds for a reopened notebook's widgets to be drawn (2 busy cores)
# Each widget output in the page (a view or, in its place, an error): the error, whether it draws, its caption.
WIDGET_OUTPUTS = """panel => [...panel.querySelectorAll('.jp-OutputArea-output')]
  .filter(o => o.classList.contains('jupyter-widgets') || o.querySelector(':scope > .jupyter-widgets'))
  .map(o => ({error: o.textContent.includes('Error displaying widget') ? o.textContent.trim().slice(0, 200) : '',
              drawing: !!o.querySelector('svg g.node'),
              caption: (o.querySelector('figcaption') || {textContent: ''}).textContent.trim()}))"""


def widget_views(path):
    """The file's widget outputs, each as (model id, whether the file's widget state holds its model)."""
    nb = nbformat.read(path, as_version=4)
    state = widget_state(nb)
    return [(o.data[WIDGET_VIEW]["model_id"], o.data[WIDGET_VIEW]["model_id"] in state)
            for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs
            if WIDGET_VIEW in o.get("data", {})]


def stored_captions(path):
    nb = nbformat.read(path, as_version=4)
    state = widget_state(nb)
    htmls = [m["state"].get("value", "") for m in state.values() if m["model_name"] == "HTMLModel"]
    return sorted(h.split("<figcaption")[1].split(">", 1)[1].split("</figcaption>")[0].strip()
                  for h in htmls if graphviz_svgs(h) and "<figcaption" in h)


def shown(page, panel, count):
    """Each widget output, once `count` are in the page, each with a drawing or an error (or after SHOWN_WITHIN)."""
    deadline = time.monotonic() + SHOWN_WITHIN
    while True:
        outputs = page.locator(panel).first.evaluate(WIDGET_OUTPUTS)
        settled = len(outputs) == count and all(o["drawing"] or o["error"] for o in outputs)
        if settled or time.monotonic() > deadline:
            return outputs
        time.sleep(0.25)


def check_reopened(page, panel, folder, path, what, timings):
    """The file holds the models of its widget outputs, and the page shows in every one the drawing the file's state
    holds, none an error. A "model not found" with the file right is the race check_first_open
    (tests/test_browser.py) describes: the page is loaded again."""
    views = widget_views(folder / path)
    assert views, f"{path} holds no widget output: nothing to check"
    assert all(kept for _, kept in views), (
        f"{what}: the saved file's widget outputs name models its widget state lacks: {views}. A saved notebook "
        "must keep in its widget state the model of every widget output it holds (tools/runtime/widget_state.py)")
    outputs = shown(page, panel, len(views))
    if any(o["error"] for o in outputs):
        timings.append(f"{what}: a widget said {outputs[0]['error']!r} with the file right; the page was loaded again")
        page.reload()
        page.locator(f"{panel} .jp-CodeCell").first.wait_for(timeout=90_000)
        outputs = shown(page, panel, len(views))
    assert len(outputs) == len(views), f"{what}: the file holds {len(views)} widget outputs, the page shows {outputs}"
    errors = [o["error"] for o in outputs if o["error"]]
    assert not errors, f"{what}: a widget shows {errors[0]!r}, its model in the file's widget state"
    assert all(o["drawing"] for o in outputs), f"{what}: a widget output shows no drawing: {outputs}"
    assert sorted(o["caption"] for o in outputs) == stored_captions(folder / path), what
    return outputs


def change_widget(page, panel_cell):
    widget = of(LESSON)[0]
    panel_cell.scroll_into_view_if_needed()       # a cell out of view is not laid out (content-visibility)
    for check in widget.checks:
        seen, _ = redraw(page, panel_cell, widget, check.change, timeout=30)
        assert check.problems(seen) == [], (widget.name, check.change)


def save(page, path, tab=None):
    """Ctrl+S; returns once the file changed (and, given JupyterLab's `tab`, that is no longer marked changed)."""
    before = path.stat().st_mtime_ns
    page.keyboard.press("Control+s")
    until(lambda: path.stat().st_mtime_ns, lambda mtime: mtime != before, 30, f"{path.name} not saved")
    if tab:
        page.locator(f"{tab}.jp-mod-dirty").wait_for(state="detached", timeout=30_000)


def _parsed(path):
    """None while the server is still writing it (in place: read at the wrong moment, it is empty)."""
    try:
        return nbformat.read(path, as_version=4)
    except (ValueError, nbformat.reader.NotJSONError):
        return None


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with served(tmp_path_factory.mktemp("learner")) as (learner, info, _):
        yield learner, info


def test_jupyterlab_reopens_saved_widgets_and_after_refresh(lab, browser, timings):
    """02 run, its widget changed, a cell edited, saved, closed: reopened, every widget shows its drawing, and saved
    before anything runs it keeps them; run again, the widget redraws. Then `make refresh` backs the changed
    notebook up and copies the collection's: both open with every widget drawn."""
    learner, info = lab
    base, copy, started = f"http://127.0.0.1:{info['port']}", learner.copy, time.perf_counter()
    sizes, first = [(copy / NAME).stat().st_size], stored_captions(copy / NAME)
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_navigation_timeout(90_000)
    run_all(page, base, info["token"], NAME)
    change_widget(page, widget_cell(page, cell_index(LESSON, of(LESSON)[0].tag, copy)))
    last = page.locator(f"{NB} .jp-CodeCell .cm-content").last     # the learner's own line
    last.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\n# my note")
    save(page, copy / NAME, TAB)
    sizes.append((copy / NAME).stat().st_size)
    close_tab(page)
    end_sessions(info, NAME)
    lab_page(page, info, NAME)
    outputs = check_reopened(page, NB, copy, NAME, "JupyterLab, reopened after a save", timings)
    assert sorted(o["caption"] for o in outputs) == first, "a reopened widget shows another than the stored drawing"
    # saved again before anything runs (autosave, or Save on closing): no live widget
    # sends its state, and the file must keep every model its widget outputs name
    save(page, copy / NAME)
    assert [kept for _, kept in widget_views(copy / NAME)] == [True], (
        "reopened and saved before running, the notebook lost the state of its widget outputs")
    # run again: the widget is live and redraws as declared; saved again
    kernel_of(info, NAME, attached, timeout=90)
    run_all(page, base, info["token"], NAME)
    change_widget(page, widget_cell(page, cell_index(LESSON, of(LESSON)[0].tag, copy)))
    save(page, copy / NAME, TAB)
    sizes.append((copy / NAME).stat().st_size)
    close_tab(page)
    end_sessions(info, NAME)
    timings.append(f"JupyterLab: {NAME} in bytes as copied, saved, saved after a reopen and a run: {sizes}")
    # make refresh: the changed notebook backed up, the collection's copied
    done = subprocess.run([sys.executable, "-m", "tools.runtime.lab", "--refresh", "--copy", str(copy)],
                          cwd=ROOT, env={**os.environ, **learner.env}, capture_output=True, text=True,
                          check=True)
    backups = sorted((copy / "backups").glob(f"*/{NAME}"))
    assert len(backups) == 1, f"make refresh kept no backup of the changed {NAME}: {done.stdout}"
    for path in (NAME, backups[0].relative_to(copy).as_posix()):
        lab_page(page, info, path)
        check_reopened(page, NB, copy, path, f"JupyterLab, {path} after make refresh", timings)
        close_tab(page)
        end_sessions(info, path)
    timings.append(f"JupyterLab: saved widgets reopened, and after make refresh, in "
                   f"{time.perf_counter() - started:.1f} s")


def _type_at_end(page, cell, text, replace=False):
    editor = cell.locator(".cm-content")
    editor.scroll_into_view_if_needed()
    editor.click()
    page.keyboard.press("Control+a" if replace else "Control+End")
    page.keyboard.type(text)


def test_a_stale_tab_saved_with_overwrite_keeps_the_other_tabs_cells(lab, browser):
    """03 in two tabs. Tab A adds a note cell under section 1's example, edits that example and saves; tab B, opened
    before, answers question 1 and saves with Ctrl+S and Overwrite: the file holds A's note, in its place, A's edit
    and B's answer (tools/runtime/saving.py)."""
    name, note, edit, answer = "03-retain-graph.ipynb", "My note from tab A", "  # edited in tab A", \
        "answer_1 = {'x - 1'}"
    learner, info = lab
    path = learner.copy / name
    ids = [c.id for c in nbformat.read(path, as_version=4).cells]
    slot = next(c.id for c in nbformat.read(path, as_version=4).cells if "answer-slot" in c.metadata.get("tags", []))
    tab_a, tab_b = (lab_page(browser.new_page(viewport=VIEWPORT), info, name) for _ in "ab")
    time.sleep(2)
    assert tab_b.locator(f"{TAB}.jp-mod-dirty").count() == 0, "a notebook just opened is marked changed"
    example = tab_a.locator(f"{NB} .jp-Cell").nth(ids.index("note-example"))
    _type_at_end(tab_a, example, edit)
    tab_a.keyboard.press("Escape")
    for key in ("b", "m", "Enter"):          # a cell below, markdown, edit it
        tab_a.keyboard.press(key)
    tab_a.keyboard.type(note)
    tab_a.keyboard.press("Escape")
    save(tab_a, path, TAB)
    saved = nbformat.read(path, as_version=4)
    assert any(c.source == note for c in saved.cells), "tab A's note was not saved"
    _type_at_end(tab_b, tab_b.locator(f"{NB} .jp-Cell").nth(ids.index(slot)), answer, replace=True)
    before = path.stat().st_mtime_ns
    tab_b.keyboard.press("Control+s")
    tab_b.get_by_role("dialog").get_by_text("File Changed").wait_for(timeout=30_000)
    tab_b.get_by_role("button", name="Overwrite").click()
    until(lambda: path.stat().st_mtime_ns, lambda mtime: mtime != before, 30, f"{name} not saved from tab B")
    tab_b.locator(f"{TAB}.jp-mod-dirty").wait_for(state="detached", timeout=30_000)   # the save is complete
    cells = until(lambda: _parsed(path), lambda nb: nb is not None, 30, f"{name} is not a whole notebook").cells
    sources = [c.source for c in cells]
    assert note in sources, "the stale tab's Overwrite lost the note cell tab A saved"
    at = [c.id for c in cells].index("note-example")
    assert sources[at + 1] == note, "tab A's note is no longer under the cell it was added below"
    assert sources[at].endswith(edit), "the stale tab's Overwrite undid tab A's edit of a lesson cell"
    assert next(c.source for c in cells if c.id == slot) == answer, "tab B's answer was not saved"
