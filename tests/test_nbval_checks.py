"""Prove the notebook checks can fail: nbval with our sanitize file must
reject a tampered output or a tampered graph structure, and must accept a
different Graphviz layout and different memory addresses. A widget's stored
output is compared in full: its text/plain is the control values, the whole
caption and the drawing's text form (ipywidgets' own is cut at 110
characters, so no caption would be compared); a view that raises is shown in
the widget, named by its cell, the same on every run."""

import os
import re
import subprocess
import sys

import nbformat
import pytest
from conftest import ROOT

from tools.build.run_notebooks import execute, reproducible

CELLS = [
    "print(1 + 1)",
    "import torch\nfrom helpers import draw_graph\n"
    "x = torch.tensor(2.0, requires_grad=True)\nz = (x ** 2) * 3\ndraw_graph(z, {'x': x})",
    "z.grad_fn",
    "from helpers import side_by_side\nside_by_side({'a': draw_graph(z), 'b': draw_graph(x * 2)})",
]
WIDGET_CELLS = [
    "from functools import partial\n\nimport ipywidgets as widgets\n\n"
    "from helpers import panel\nfrom helpers.lessons.nb01 import loop_view",
    "def loop(x, n):\n    if n < 0:\n        raise ValueError('n must not be negative')\n"
    "    for _ in range(n):\n        x = x * 2 + 1\n    return x",
    "box = panel(partial(loop_view, loop), n=widgets.IntSlider(value=2, min=-2, max=5, description='n'))\nbox",
    "box.controls['n'].value = -1\nbox",
]
CAPTION = "n = 2: 4 operations, 5 autograd nodes, 10 boxes drawn"


def _executed(folder, cells):
    path = folder / "built.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    # as make notebooks writes it: stable widget ids, no run numbers
    return nbformat.reads(nbformat.writes(reproducible(execute(path), None, path.stem)), as_version=4)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    return _executed(tmp_path_factory.mktemp("nb"), CELLS)


@pytest.fixture(scope="module")
def widget(tmp_path_factory):
    return _executed(tmp_path_factory.mktemp("widget"), WIDGET_CELLS)


def _variant(nb, change):
    copy = nbformat.reads(nbformat.writes(nb), as_version=4)
    change(copy.cells)
    return copy


# The inner run's conftest when it compares byte for byte too, as make test does (tests/one_execution.py).
BYTES_CONFTEST = f"""import sys
import pytest
sys.path.insert(0, {str(ROOT / 'tests')!r})
from one_execution import add_items, keep_nbvals_messages
keep_nbvals_messages()

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    add_items(items)
"""


def _nbval(folder, books, bytes_too=False):
    for name, nb in books.items():
        nbformat.write(nb, folder / name)
    (folder / "pytest.ini").write_text("[pytest]\n")
    if bytes_too:
        (folder / "conftest.py").write_text(BYTES_CONFTEST)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-rA", "-p", "no:cacheprovider",
         f"--nbval-sanitize-with={ROOT / 'tests' / 'sanitize.cfg'}", "-c", str(folder / "pytest.ini"),
         "--rootdir", str(folder), *sorted(books)],
        # without PYTEST_ADDOPTS: the inner run's report, whose lines the tests count, is the same whatever
        # options the outer run was given
        cwd=folder, capture_output=True, text=True, check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"})
    return done.returncode, done.stdout


def _relaid(cells):
    """What another Graphviz release changes: coordinates and sizes."""
    for out in (cells[1].outputs[0].data, cells[3].outputs[0].data):
        key = "image/svg+xml" if "image/svg+xml" in out else "text/html"
        assert "<svg" in out[key]
        out[key] = re.sub(r'(width|height|x|y|points)="[^"]*"', r'\1="7"', out[key])
    cells[2].outputs[0].data["text/plain"] = re.sub("0x[0-9a-f]+", "0xdeadbeef", cells[2].outputs[0].data["text/plain"])


def _wrong_print(cells):
    cells[0].outputs[0].text = "3\n"


def _wrong_edge(cells):
    for cell in (cells[1], cells[3]):
        text = cell.outputs[0].data["text/plain"]
        assert "n2 -> n1 [input 0]" in text
        cell.outputs[0].data["text/plain"] = text.replace("n2 -> n1 [input 0]", "n4 -> n1 [input 0]", 1)


def _widget_text(cells, cell=2):
    return cells[cell].outputs[0].data["text/plain"]


def _tampered_caption(cells):
    cells[2].outputs[0].data["text/plain"] = _widget_text(cells).replace("4 operations", "5 operations")


def _tampered_drawing(cells):
    cells[2].outputs[0].data["text/plain"] = _widget_text(cells).replace("n4 -> n2 [input 0]", "n4 -> n1 [input 0]")


def test_stored_outputs_are_real(executed, widget):
    assert executed.cells[0].outputs[0].text == "2\n"
    assert "image/svg+xml" in executed.cells[1].outputs[0].data
    assert " at 0x" in executed.cells[2].outputs[0].data["text/plain"]
    # a widget's text/plain holds its caption, its drawing and the error that replaced a drawing
    assert _widget_text(widget.cells).startswith(f"panel(n=2)\n{CAPTION}\n10 nodes, 9 edges")
    assert "n4 -> n2 [input 0]" in _widget_text(widget.cells)
    assert _widget_text(widget.cells, 3) == ("panel(n=-1)\nNo drawing for n=-1: the view raised an error.\n"
                                             "ValueError: n must not be negative\n  Cell In[2], line 3, in loop\n"
                                             "    raise ValueError('n must not be negative')")


@pytest.fixture(scope="module")
def compared(executed, widget, tmp_path_factory):
    """One nbval run, comparing byte for byte too as make test does, over the notebook
    untouched, relaid (another Graphviz's layout, other addresses) and tampered twice,
    and the widget notebook with its caption or its drawing tampered."""
    books = {"untouched.ipynb": executed, "relaid.ipynb": _variant(executed, _relaid),
             "print.ipynb": _variant(executed, _wrong_print), "edge.ipynb": _variant(executed, _wrong_edge),
             "caption.ipynb": _variant(widget, _tampered_caption), "drawing.ipynb": _variant(widget, _tampered_drawing)}
    return _nbval(tmp_path_factory.mktemp("compared"), books, bytes_too=True)


def _passed(out, book):
    return [line for line in out.splitlines() if line.startswith(f"PASSED {book}::Cell ")]


def test_untouched_and_relaid_pass(compared):
    code, out = compared
    assert code == 1, out                               # the tampered ones fail
    for book in ("untouched.ipynb", "relaid.ipynb"):
        assert len(_passed(out, book)) == len(CELLS), out


def test_tampered_outputs_fail(compared):
    _, out = compared
    assert "FAILED print.ipynb::Cell 0" in out
    assert "FAILED edge.ipynb::Cell 1" in out and "FAILED edge.ipynb::Cell 3" in out
    assert len(_passed(out, "print.ipynb")) + len(_passed(out, "edge.ipynb")) == 2 * len(CELLS) - 3, out
    assert "FAILED caption.ipynb::Cell 2" in out and "FAILED drawing.ipynb::Cell 2" in out
    assert len(_passed(out, "caption.ipynb")) + len(_passed(out, "drawing.ipynb")) == 2 * len(WIDGET_CELLS) - 2, out


def test_the_one_execution_is_compared_byte_for_byte_too(compared):
    """What nbval's rules allow (another layout of a drawing), the byte-for-byte comparison
    of the same execution rejects; an untouched notebook passes both."""
    _, out = compared
    assert "PASSED untouched.ipynb::byte for byte" in out, out
    assert "FAILED relaid.ipynb::byte for byte" in out, out
