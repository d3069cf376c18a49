"""Every notebook keeps the skeleton; the checks themselves can fail."""

import nbformat
import pytest
from nav import NOTEBOOKS, notebook_paths, stale
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from structure import problems

PATHS = notebook_paths()


def test_collection_starts_with_the_index():
    assert PATHS and PATHS[0].name == "00-index.ipynb"


def test_navigation_is_up_to_date():
    assert stale(write=False) == [], "run `make nav` (tools/nav.py)"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_skeleton(path):
    nb = nbformat.read(path, as_version=4)
    assert problems(nb, NOTEBOOKS, lesson=path.name != "00-index.ipynb") == []


def _good_lesson():
    nav = "<!--NAVIGATION-->\n[Contents](00-index.ipynb)"
    cells = [
        new_markdown_cell("# A lesson"), new_markdown_cell(nav),
        new_markdown_cell("## Learning goals\n\n- one\n- two\n- three"),
        new_code_cell("import torch\nfrom helpers import draw_graph\ntorch.manual_seed(0)", execution_count=1),
        new_code_cell("1 / 0", execution_count=2, metadata={"tags": ["raises-exception"]},
                      outputs=[new_output("error", ename="ZeroDivisionError", evalue="", traceback=[])]),
        new_markdown_cell("## Exercises\n\n1. Why?\n\n<details><summary>Answer</summary>Because.</details>"),
        new_code_cell("assert True", execution_count=3),
        new_markdown_cell("## Summary\n\n- done"), new_markdown_cell(nav),
    ]
    return new_notebook(cells=cells)


def test_a_good_lesson_passes():
    assert problems(_good_lesson(), NOTEBOOKS) == []


def _break(change):
    nb = _good_lesson()
    change(nb.cells)
    return problems(nb, NOTEBOOKS)


@pytest.mark.parametrize("change, words", [
    (lambda c: c.pop(0), "first cell"),
    (lambda c: c.insert(3, new_markdown_cell("# Second title")), "one H1"),
    (lambda c: c.pop(1), "navigation"),
    (lambda c: setattr(c[3], "execution_count", 7), "executed once, in order"),
    (lambda c: setattr(c[3], "source", c[3].source + "\n%pip install torch"), "no pip install"),
    (lambda c: setattr(c[6], "metadata", {"tags": ["nbval-skip"]}), "skipped cell"),
    (lambda c: setattr(c[6], "source", "# NBVAL_SKIP\nassert False"), "belong in cell tags"),
    (lambda c: setattr(c[4], "outputs", []), "raises-exception tag must go together"),
    (lambda c: setattr(c[4], "metadata", {}), "raises-exception tag must go together"),
    (lambda c: setattr(c[6], "metadata", {"tags": ["nbval-ignore-output"]}), "only for widget"),
    (lambda c: setattr(c[2], "source", "## Learning goals\n\n- one"), "3 to 5 bullets"),
    (lambda c: setattr(c[3], "source", "import torch"), "torch.manual_seed(0)"),
    (lambda c: setattr(c[5], "source", "## Exercises\n\n1. Why?"), "<details>"),
    (lambda c: setattr(c[7], "source", "## Summary\n\nNothing."), "Summary' needs bullets"),
    (lambda c: setattr(c[1], "source", "<!--NAVIGATION-->\n[Next](99-missing.ipynb)"), "broken link"),
])
def test_each_broken_skeleton_is_caught(change, words):
    assert any(words in p for p in _break(change)), _break(change)


def test_index_needs_its_parts():
    nb = new_notebook(cells=[new_markdown_cell("# Index"), new_markdown_cell("<!--NAVIGATION-->\nx"),
                             new_markdown_cell("<!--NAVIGATION-->\nx")])
    assert len(problems(nb, NOTEBOOKS, lesson=False)) == 3
