"""The widget registry (helpers/lessons/nbNN.py) against the notebooks, without a browser: every widget cell is
registered by its tag and every entry has its cell; a stored widget matches its declaration. (A widget cell
changed and not run again is caught by the notebook layer's byte-for-byte comparison, tests/one_execution.py.)"""

import nbformat
import pytest

from helpers.lessons import widgets
from tools.notebooks import notebook_paths
from tools.testkit.widget_cells import cell_index, code_cells, problems, stored_problems

NOTEBOOKS = {path.stem: nbformat.read(path, as_version=4) for path in notebook_paths()}


def test_every_widget_cell_is_registered_and_every_entry_has_its_cell():
    assert problems(NOTEBOOKS) == []
    assert {w.notebook for w in widgets()} <= set(NOTEBOOKS)
    assert len({w.tag for w in widgets()}) == len(widgets())


@pytest.mark.parametrize("widget", widgets(), ids=[w.tag for w in widgets()])
def test_each_declaration_fits_its_cell_and_its_stored_widget(widget):
    cell = code_cells(NOTEBOOKS[widget.notebook])[cell_index(widget.notebook, widget.tag)]
    assert widget.tag in cell.metadata["tags"]
    assert {check.change.control for check in widget.checks} <= set(widget.controls)
    assert stored_problems(NOTEBOOKS[widget.notebook], widget) == []

