"""`make notebook`: Notebook 7 on a new learner's working copy, in headless Chromium: 01 runs clean, redraws and
works from the keyboard, as does 06's quiz; 02 shows its saved widgets when reopened."""

import time
from pathlib import Path

import nbformat
import pytest
from learner import VIEWPORT, attached, gone, kernel_of, served, until
from test_saved_widgets import LESSON, NAME, check_reopened, save, stored_captions

from helpers.lessons import of
from tools.build.run_notebooks import raises
from tools.notebooks import notebook_paths
from tools.runtime.lab import lab_argv
from tools.testkit import browser as lab_browser
from tools.testkit.browser import CELLS, NB
from tools.testkit.widget_cells import cell_index
from tools.testkit.widget_page import VIEW, change_and_wait, keyboard_problems, redraw, widget_cell

NOTEBOOK = "01-dynamic-control-flow.ipynb"
QUIZ = "06-practice-question.ipynb"
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots"


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory):
    with served(tmp_path_factory.mktemp("learner"), app="notebook") as (learner, info, _):
        yield learner, info


def test_the_server_serves_the_working_copy_from_its_index(notebook7):
    """Its loopback address, token and settings are JupyterLab's server's: test_lab.py, and test_saving.py's
    test_every_server_the_learner_meets_has_the_servers_settings."""
    learner, info = notebook7
    assert info["root_dir"] == str(learner.copy)
    assert "--JupyterNotebookApp.default_url=/notebooks/00-index.ipynb" in lab_argv(root=learner.copy, app="notebook")


def run_all(page, info, name):
    """Outputs cleared, Run All; (its kernel, the seconds taken) once every cell ran, in order."""
    page.goto(f"http://127.0.0.1:{info['port']}/notebooks/{name}?token={info['token']}")
    page.locator(f"{NB} .jp-CodeCell").first.wait_for(timeout=90_000)
    kernel = kernel_of(info, name, attached, timeout=90)
    prompts = lambda: page.evaluate(lab_browser.PROMPTS)  # noqa: E731
    page.locator(f"{NB} .jp-Cell").first.click()
    lab_browser.menu(page, "Edit", "Clear Outputs of All Cells")
    until(prompts, lambda seen: seen and all(p == "[ ]:" for p in seen), 30, "outputs not cleared")
    start = time.perf_counter()
    lab_browser.menu(page, "Run", "Run All Cells")
    # the set-up cell, first, has its input hidden: its run number shows on no prompt, the others count on from 2
    until(prompts, lambda seen: seen == [f"[{n}]:" for n in range(2, len(seen) + 2)], 300, "Run All did not finish")
    return kernel, time.perf_counter() - start


def test_runs_01_and_redraws_a_widget(notebook7, browser, timings):
    learner, info = notebook7
    page = browser.new_page(viewport=VIEWPORT)
    timings.append(f"Notebook 7: Run All of {NOTEBOOK} in {run_all(page, info, NOTEBOOK)[1]:.1f} s")
    tagged = [raises(cell) for cell in nbformat.read(learner.copy / NOTEBOOK, as_version=4).cells
              if cell.cell_type == "code"]
    assert [c["stderr"] for c in page.evaluate(CELLS)] == tagged, "an error outside the cells tagged to raise"
    widget = of(NOTEBOOK.removesuffix(".ipynb"))[0]
    cell = widget_cell(page, cell_index(NOTEBOOK.removesuffix(".ipynb"), widget.tag, learner.copy))
    for check in widget.checks:
        shown, _ = redraw(page, cell, widget, check.change, timeout=30)
        assert check.problems(shown) == [], (widget.name, check.change)
    # every widget's controls with the keyboard alone: Notebook 7 reads a key before the widget does, and
    # took the arrows on a slider for its own (tools/build/shortcuts.py)
    assert keyboard_problems(page, NOTEBOOK.removesuffix(".ipynb"), learner.copy, timeout=30) == []
    assert page.get_by_text("notified about official Jupyter news").count() == 0
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "notebook7-01-widget-changed.png"))
    page.close()


def test_the_quiz_works_with_the_keyboard(notebook7, browser):
    """Radio buttons: the one kind of control 01 has none of."""
    learner, info = notebook7
    page = browser.new_page(viewport=VIEWPORT)
    run_all(page, info, QUIZ)
    assert keyboard_problems(page, QUIZ.removesuffix(".ipynb"), learner.copy, timeout=30) == []
    # the check fails on a control taken out of the Tab order
    page.evaluate("() => document.querySelectorAll('.widget-radio-box input').forEach(i => i.tabIndex = -1)")
    found = keyboard_problems(page, QUIZ.removesuffix(".ipynb"), learner.copy, timeout=30)
    assert found and all("not in the Tab order" in problem for problem in found), found
    kinds = {kind for notebook in (NOTEBOOK, QUIZ) for widget in of(notebook.removesuffix(".ipynb"))
             for kind in widget.controls.values()}
    every = {kind for path in notebook_paths() for widget in of(path.stem) for kind in widget.controls.values()}
    assert kinds == every, f"no notebook of this file's has a {sorted(every - kinds)}: press its key here too"
    page.close()


def click_slider(page, panel_cell, path):
    """A click 30% along the slider's track, as with a mouse: Notebook 7's key bindings run before the slider's."""
    track = panel_cell.locator(".noUi-target").first
    box = track.bounding_box()
    view = panel_cell.locator(VIEW)
    # Playwright's click scrolls the track into view and waits until nothing covers it
    change_and_wait(page, view, lambda: track.click(position={"x": box["width"] * 0.3, "y": box["height"] / 2}), 30)
    caption = view.evaluate("v => v.querySelector('figcaption').textContent.trim()")
    assert caption.startswith("step ") and caption not in stored_captions(path), caption


def test_notebook7_reopens_saved_widgets(notebook7, browser, timings):
    """02 run, its widget changed, saved, closed with Close and Shut Down, reopened."""
    learner, info = notebook7
    copy, started = learner.copy, time.perf_counter()
    first = stored_captions(copy / NAME)
    page = browser.new_page(viewport=VIEWPORT)
    kernel, _ = run_all(page, info, NAME)
    click_slider(page, widget_cell(page, cell_index(LESSON, of(LESSON)[0].tag, copy)), copy / NAME)
    save(page, copy / NAME)
    page.locator(".lm-MenuBar-itemLabel", has_text="File").first.click()
    page.get_by_role("menuitem", name="Close and Shut Down Notebook").click()
    page.get_by_role("button", name="Shut Down").click()
    gone(info, kernel)
    page.close()
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(f"http://127.0.0.1:{info['port']}/notebooks/{NAME}?token={info['token']}")
    page.locator(f"{NB} .jp-CodeCell").first.wait_for(timeout=90_000)
    outputs = check_reopened(page, NB, copy, NAME, "Notebook 7, reopened after a save", timings)
    assert sorted(o["caption"] for o in outputs) == first, "a reopened widget shows another than the stored drawing"
    timings.append(f"Notebook 7: saved widgets reopened in {time.perf_counter() - started:.1f} s")
    page.close()
