"""A widget's stored output is compared by nbval in full: its text/plain is
the control values, the whole caption and the drawing's text form (ipywidgets'
own is cut at 110 characters, so no caption would be compared). Proved on a
small notebook with a widget: a tampered caption or drawing is rejected, a
view that raises is shown in the widget, named by its cell, the same on
every run."""

import nbformat
import pytest
from test_nbval_checks import _nbval, _variant

from tools.build.run_notebooks import execute

CELLS = [
    "from functools import partial\n\nimport ipywidgets as widgets\n\n"
    "from helpers import panel\nfrom helpers.lessons.nb01 import loop_view",
    "def loop(x, n):\n    if n < 0:\n        raise ValueError('n must not be negative')\n"
    "    for _ in range(n):\n        x = x * 2 + 1\n    return x",
    "box = panel(partial(loop_view, loop), n=widgets.IntSlider(value=2, min=-2, max=5, description='n'))\nbox",
    "box.controls['n'].value = -1\nbox",
]
CAPTION = "n = 2: 4 operations, 5 autograd nodes, 10 boxes drawn"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    path, kernel = tmp_path_factory.mktemp("nb") / "widget.ipynb", {"name": "python3", "display_name": "Python 3"}
    cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    nbformat.write(nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": kernel}), path)
    return nbformat.reads(nbformat.writes(execute(path)), as_version=4)


def _text(cells, cell):
    return cells[cell].outputs[0].data["text/plain"]


def test_the_stored_widget_holds_its_caption_drawing_and_errors(executed):
    assert _text(executed.cells, 2).startswith(f"panel(n=2)\n{CAPTION}\n10 nodes, 9 edges")
    assert "n4 -> n2 [input 0]" in _text(executed.cells, 2)
    assert _text(executed.cells, 3) == ("panel(n=-1)\nNo drawing for n=-1: the view raised an error.\n"
                                  "ValueError: n must not be negative\n"
                                  "  Cell In[2], line 3, in loop\n    raise ValueError('n must not be negative')")


def _tampered_caption(cells):
    cells[2].outputs[0].data["text/plain"] = _text(cells, 2).replace("4 operations", "5 operations")


def _tampered_drawing(cells):
    cells[2].outputs[0].data["text/plain"] = _text(cells, 2).replace("n4 -> n2 [input 0]", "n4 -> n1 [input 0]")


def test_nbval_rejects_a_tampered_caption_or_drawing(executed, tmp_path):
    books = {"caption.ipynb": _variant(executed, _tampered_caption),
             "drawing.ipynb": _variant(executed, _tampered_drawing)}
    code, out = _nbval(tmp_path, books)
    assert code == 1, out
    assert "FAILED caption.ipynb::Cell 2" in out and "FAILED drawing.ipynb::Cell 2" in out
    assert out.count("FAILED") == 2 and out.count("PASSED") == 2 * len(CELLS) - 2
