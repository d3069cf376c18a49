"""`make notebook`: Jupyter Notebook 7, the other front end learners use, on a
new learner's working copy with the command line `make notebook` runs
(loopback only, the token required). In headless Chromium: 01 runs from top
to bottom without an error outside its tagged cells, and ticking off its
first widget (found by its tag, changed as its declaration says) redraws as
declared, and every control of its widgets, and of 06's quiz, works with the
keyboard alone and is in the Tab order."""

import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest
from learner import attached, chromium, kernel_of, new_learner

from helpers.lessons import of
from tools.build.run_notebooks import raises
from tools.notebooks import notebook_paths
from tools.runtime.lab import lab_argv
from tools.testkit import browser as lab_browser
from tools.testkit.browser import serve, stop
from tools.testkit.widget_cells import cell_index
from tools.testkit.widget_page import keyboard_problems, redraw, widget_cell

NOTEBOOK = "01-dynamic-control-flow.ipynb"
QUIZ = "06-practice-question.ipynb"
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots"
VIEWPORT = {"width": 1366, "height": 768}
# the run numbers of the cells whose input shows (a hidden one's placeholder has an empty prompt)
PROMPTS = ("[...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell "
           ".jp-InputPrompt:not(.jp-Placeholder-prompt)')]"
           ".map(e => e.textContent.trim())")
RAN = f"() => {{ const p = {PROMPTS}; return p.length > 0 && p.every(t => /^\\[\\d+\\]:$/.test(t)); }}"
ERRORS = """() => [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell')].map(c =>
  !!c.querySelector('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'))"""


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory):
    """A new learner's working copy served by `jupyter notebook` with the
    command line of `make notebook` (tools.runtime.lab.lab_argv(app="notebook"))."""
    learner = new_learner(tmp_path_factory.mktemp("learner"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lab_browser, "lab_argv", lambda *a, **k: lab_argv(*a, app="notebook", **k))
        proc, info = serve(learner.copy, learner.home / "runtime", learner.env)
    try:
        yield learner, info
    finally:
        stop(proc)


def test_loopback_and_token(notebook7):
    learner, info = notebook7
    assert info["root_dir"] == str(learner.copy)
    assert "--JupyterNotebookApp.default_url=/notebooks/00-index.ipynb" in lab_argv(root=learner.copy, app="notebook")
    url = f"http://127.0.0.1:{info['port']}/api/contents"
    with pytest.raises(urllib.error.HTTPError, match="403"):
        urllib.request.urlopen(url, timeout=30)
    with urllib.request.urlopen(f"{url}?token={info['token']}", timeout=30) as reply:
        assert reply.status == 200


def run_all(page, info, name):
    """Open notebook `name` in Notebook 7 and Run All; the seconds Run All took."""
    page.goto(f"http://127.0.0.1:{info['port']}/notebooks/{name}?token={info['token']}")
    page.locator(".jp-NotebookPanel .jp-CodeCell").first.wait_for(timeout=90_000)
    kernel_of(info, name, attached, timeout=90)
    start = time.perf_counter()
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    page.wait_for_function(RAN, timeout=300_000, polling=250)
    return time.perf_counter() - start


def test_runs_01_and_redraws_a_widget(notebook7, timings):
    learner, info = notebook7
    with chromium() as browser:
        page = browser.new_page(viewport=VIEWPORT)
        timings.append(f"Notebook 7: Run All of {NOTEBOOK} in {run_all(page, info, NOTEBOOK):.1f} s")
        tagged = [raises(cell) for cell in nbformat.read(learner.copy / NOTEBOOK, as_version=4).cells
                  if cell.cell_type == "code"]
        assert page.evaluate(ERRORS) == tagged, "an error shows outside the cells tagged raises-exception"
        # the first widget, found by its tag and driven by its control's position, as test_browser does
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


def test_the_quiz_works_with_the_keyboard(notebook7):
    """06's quiz, the one kind of control 01 has none of (radio buttons), with
    one key press on it, as above."""
    learner, info = notebook7
    with chromium() as browser:
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
