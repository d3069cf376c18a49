"""The widget registry (helpers/lessons/nbNN.py) against the notebooks,
without a browser: every widget cell is registered by its tag and every
entry has its cell; a stored widget matches its declaration; a check reads
a redrawn widget's caption, nodes and error."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from helpers.lessons import widgets
from helpers.lessons.widget import CHANGES, Check, Shown, Widget, click, press
from tools.notebooks import NOTEBOOKS as NOTEBOOKS_FOLDER
from tools.notebooks import notebook_paths
from tools.testkit.widget_cells import cell_index, code_cells, problems, stored_problems

NOTEBOOKS = {path.stem: nbformat.read(path, as_version=4) for path in notebook_paths()}
LOOP = Widget("loop", {"n": "IntSlider"}, (Check(press("n"), "n = 4"),), {}, notebook="01-fixture")


def test_every_widget_cell_is_registered_and_every_entry_has_its_cell():
    assert problems(NOTEBOOKS) == []
    assert {w.notebook for w in widgets()} <= set(NOTEBOOKS)
    assert len({w.tag for w in widgets()}) == len(widgets())


@pytest.mark.parametrize("widget", widgets(), ids=[w.tag for w in widgets()])
def test_each_declaration_fits_its_cell(widget):
    cell = code_cells(NOTEBOOKS[widget.notebook])[cell_index(widget.notebook, widget.tag)]
    assert widget.tag in cell.metadata["tags"]
    assert {check.change.control for check in widget.checks} <= set(widget.controls)
    assert all(len(changes) == CHANGES and {c.control for c in changes} <= set(widget.controls)
               for changes in widget.bench.values())


@pytest.mark.parametrize("widget", widgets(), ids=[w.tag for w in widgets()])
def test_each_stored_widget_matches_its_declaration(widget):
    assert stored_problems(NOTEBOOKS[widget.notebook], widget) == []


def _notebook(*cells):
    return new_notebook(cells=list(cells))


PANEL = "panel(partial(loop_view, loop), n=widgets.IntSlider(value=3))"


def test_an_unregistered_widget_is_caught():
    untagged = _notebook(new_code_cell(PANEL))
    assert "01-fixture: code cell 0 shows a widget but is not registered" in problems({"01-fixture": untagged})[0]
    stored = new_code_cell("box", outputs=[new_output("execute_result", data={
        "application/vnd.jupyter.widget-view+json": {"model_id": "1"}, "text/plain": "VBox()"})])
    assert "code cell 0 shows a widget but is not registered" in problems({"01-fixture": _notebook(stored)})[0]
    registered = _notebook(new_code_cell(PANEL, metadata={"tags": ["widget-loop"]}))
    assert problems({"01-fixture": registered}, (LOOP,)) == []
    assert "widget-loop, which the registry does not declare" in problems({"01-fixture": registered})[0]


def test_an_entry_without_its_cell_or_a_tag_without_a_widget_is_caught():
    assert problems({"01-fixture": _notebook(new_code_cell("1 + 1"))}, (LOOP,)) == [
        "widget-loop: 0 cells in 01-fixture carry this tag; one must"]
    tagged = new_code_cell("1 + 1", metadata={"tags": ["widget-loop"]})
    assert "is tagged widget-loop but shows no widget" in problems({"01-fixture": _notebook(tagged)}, (LOOP,))[0]
    twice = _notebook(*[new_code_cell(PANEL, metadata={"tags": ["widget-loop"]}) for _ in range(2)])
    assert problems({"01-fixture": twice}, (LOOP,)) == ["widget-loop: 2 cells in 01-fixture carry this tag; one must"]


def test_a_stored_widget_that_differs_from_its_declaration_is_caught():
    nb = _notebook(new_code_cell(PANEL, metadata={"tags": ["widget-loop"]}, outputs=[new_output(
        "execute_result", data={"application/vnd.jupyter.widget-view+json": {"model_id": "box"},
                                "text/plain": "panel(m=3)\nNo drawing for m=3: the view raised an error.\nE"})]))
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {
        "box": {"state": {"children": ["IPY_MODEL_row"]}}, "row": {"state": {"children": ["IPY_MODEL_s"]}},
        "s": {"model_name": "FloatSliderModel"}}}}
    found = stored_problems(nb, LOOP)
    assert len(found) == 3 and "controls ['m'], declared ['n']" in found[0]
    assert "stored view shows an error" in found[1] and "saved controls ['FloatSliderModel']" in found[2]


def test_a_check_reads_caption_nodes_and_errors():
    check = Check(click("view", "cut"), "(cut)", {"TanhBackward0": 2}, ("more nodes not drawn",))
    good = Shown("length 5 (cut)", ("TanhBackward0", "TanhBackward0", "... 3 more nodes not drawn: 60 of 63"))
    assert check.problems(good) == []
    assert check.problems(Shown("length 5 (rolled)", ("TanhBackward0",))) == [
        "caption 'length 5 (rolled)' lacks '(cut)'", "1 nodes TanhBackward0, expected 2",
        "no node shows 'more nodes not drawn'"]
    broken = Shown("", error="No drawing for n=2: the view raised an error. RuntimeError: a broken callback")
    assert check.problems(broken) == [f"the view raised instead of drawing: {broken.error}"]


def test_a_widget_cell_changed_and_not_run_again_is_caught():
    widget = widgets("05")[0]
    nb = nbformat.read(NOTEBOOKS_FOLDER / f"{widget.notebook}.ipynb", as_version=4)
    assert stored_problems(nb, widget) == []
    cell = code_cells(nb)[cell_index(widget.notebook, widget.tag)]
    assert "max=30" in cell.source
    cell.source = cell.source.replace("max=30", "max=40")
    assert stored_problems(nb, widget) == [
        f"{widget.tag}: control 1's max is 40 in the cell's source but 30 in its stored state: the cell was changed "
        "and not run again; re-execute the notebook (make notebooks NB=notebooks/<name>.ipynb)"]
