"""Every notebook keeps the skeleton; the checks themselves can fail."""


import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from structure import LINE_LIMIT, long_lines, problems

from tools.build.nav import INSTALL, install_source, stale
from tools.notebooks import NOTEBOOKS, notebook_paths
from tools.runtime import kernel

PATHS = notebook_paths()


def test_navigation_is_up_to_date():
    assert stale(write=False) == [], "run `make nav` (tools/build/nav.py)"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_skeleton(path):
    nb = nbformat.read(path, as_version=4)
    assert problems(nb, NOTEBOOKS, lesson=path.name != "00-index.ipynb") == []


def _exercise(number, status="Not answered yet: replace ____ with a number"):
    slot = new_code_cell(f"answer_{number} = ____", metadata={"tags": ["answer-slot"]})
    check = new_code_cell(f"ex.q{number}.check(answer_{number})", metadata={"tags": ["answer-check"]},
                          outputs=[new_output("execute_result", data={"text/plain": status})])
    return [new_markdown_cell(f"### {number}. A question"), slot, check]


def _set_up():
    return new_code_cell(install_source(), id=INSTALL, outputs=[new_output("stream", text="Ready: torch 2.13.0\n")],
                         metadata={"jupyter": {"source_hidden": True}, "cellView": "form",
                                   "tags": ["kernel-only", "nbval-ignore-output", "varies-with-torch"]})


def _good_lesson():
    nav = "<!--NAVIGATION-->\n[Contents](00-index.ipynb)"
    cells = [
        new_markdown_cell("# A lesson"), new_markdown_cell(nav), _set_up(),
        new_markdown_cell("## Learning goals\n\n- one\n- two\n- three"),
        new_code_cell("import torch\nfrom helpers import draw_graph\ntorch.manual_seed(0)"),
        new_code_cell("1 / 0", metadata={"tags": ["raises-exception"]},
                      outputs=[new_output("error", ename="ZeroDivisionError", evalue="", traceback=[])]),
        new_markdown_cell("## Exercises\n\nReplace each ____."),
        *[cell for number in range(1, 5) for cell in _exercise(number)],
        new_markdown_cell("## Summary\n\n- done"), new_markdown_cell("## Your score"),
        new_code_cell("ex.score()",
                      outputs=[new_output("execute_result", data={"text/plain": "Your score this session: 0 of 4"})]),
        new_markdown_cell(nav),
    ]
    code = [c for c in cells if c.cell_type == "code"]
    for count, cell in enumerate(code, start=1):
        cell.execution_count = count if cell.outputs else None
        for output in cell.outputs:
            if output.output_type == "execute_result":
                output.execution_count = count
    return new_notebook(cells=cells, metadata=kernel.recorded())


def test_a_good_lesson_passes():
    assert problems(_good_lesson(), NOTEBOOKS) == []


def _break(change, set_up=False):
    """The problems of the good lesson after `change(cells)`; the cells it
    gets leave the set-up cell out unless `set_up`, so their numbers are
    the lesson's own."""
    nb = _good_lesson()
    if set_up:
        change(nb.cells)
    else:
        cell = nb.cells.pop(2)
        change(nb.cells)
        nb.cells.insert(2, cell)
    return problems(nb, NOTEBOOKS)


@pytest.mark.parametrize("change, words", [
    (lambda c: c.pop(0), "first cell"),
    (lambda c: c.pop(1), "navigation"),
    (lambda c: setattr(c[3], "execution_count", 7), "executed once, in order"),
    (lambda c: setattr(c[2], "source", c[2].source + " (`helpers/no_such_module.py`)"), "not in the repository"),
    (lambda c: setattr(c[7], "execution_count", 5), "stores no run number"),
    (lambda c: setattr(c[3], "source", c[3].source + "\n%pip install torch"), "no pip install"),
    (lambda c: setattr(c[8], "metadata", {"tags": ["answer-check", "nbval-skip"]}), "skipped cell"),
    (lambda c: setattr(c[7], "source", "# NBVAL_SKIP\nanswer_1 = ____"), "belong in cell tags"),
    (lambda c: setattr(c[4], "outputs", []), "raises-exception tag must go together"),
    (lambda c: setattr(c[4], "metadata", {}), "raises-exception tag must go together"),
    (lambda c: setattr(c[8], "metadata", {"tags": ["nbval-ignore-output"]}), "only for cells that print measured"),
    (lambda c: setattr(c[3], "source", "import torch"), "torch.manual_seed(0)"),
    (lambda c: setattr(c[1], "source", "<!--NAVIGATION-->\n[Next](99-missing.ipynb)"), "broken link"),
    (lambda c: setattr(c[1], "source", "<!--NAVIGATION-->\n[Next](../notebooks/00-index.ipynb#top)"), "broken link"),
    (lambda c: setattr(c[7], "source", "answer_1 = 11"), "must hold the placeholder"),
    (lambda c: setattr(c[8], "source", "ex.q2.check(answer_1)"), "followed by its check"),
    (lambda c: setattr(c[8], "metadata", {}), "must carry the cell tag answer-check"),
    (lambda c: setattr(c[8].outputs[0], "data", {"text/plain": "Right: 2 * 5 + 1"}), "must say 'Not answered yet'"),
    (lambda c: c.insert(9, new_code_cell("ex.q1.solution()")), "no cell calls them"),
    (lambda c: setattr(c[5], "source", "## Exercises\n\n<details>11</details>"), "no answers in sight"),
    (lambda c: setattr(c[-2], "source", "print('done')"), "last code cell must be ex.score()"),
    (lambda c: c[4].outputs[0].traceback.append("File /home/ada/.venv/lib/python3.11/site-packages/torch/x.py:1"),
     "names a path of the machine"),
])
def test_each_broken_skeleton_is_caught(change, words):
    assert any(words in p for p in _break(change)), _break(change)


def _more_lines(cells):
    cells[2].source += "\nprint('one line more')"


@pytest.mark.parametrize("change, words", [
    (_more_lines, "over 4"),
    (lambda c: setattr(c[2], "source", "import helpers\n" + c[2].source), "reads as its title"),
    (lambda c: setattr(c[2], "source", c[2].source.replace("%reload_ext", "try:\n    %reload_ext")), "no try"),
    (lambda c: c[2].metadata.pop("jupyter"), "must be hidden"),
    (lambda c: c[2].metadata.pop("cellView"), "must be hidden"),
    (lambda c: c[2].metadata.update(tags=[]), "tagged kernel-only"),
    (lambda c: c.insert(4, c.pop(2)), "set-up cell (id install"),
])
def test_each_broken_set_up_cell_is_caught(change, words):
    assert any(words in p for p in _break(change, set_up=True)), _break(change, set_up=True)


@pytest.mark.parametrize("key, value", [("language_info", {"version": "3.11.2"}),
                                        ("kernelspec", {"name": "venv-3.11", "display_name": "Python (venv)"})])
def test_a_notebook_recording_another_kernel_is_caught(key, value):
    """A notebook run by ipykernel's own kernel records the interpreter's release (3.11.2), one run
    under another kernelspec names it: both are rewritten when JupyterLab opens it."""
    nb = _good_lesson()
    nb.metadata[key] = {**nb.metadata[key], **value}
    assert [p for p in problems(nb, NOTEBOOKS) if f"metadata {key}" in p and "make notebooks" in p]


def _with_line(length, markdown=False):
    """The good lesson with one code line of `length` characters, in its
    setup cell or in a python code block of a markdown cell."""
    nb, line = _good_lesson(), "x = " + "1" * (length - 4)
    if markdown:
        nb.cells[3].source += f"\n\n```python\n{line}\n```\n\n" + "Prose runs on. " * 10
    else:
        nb.cells[4].source += "\n" + line
    return long_lines(nb.cells)


def test_the_line_limit_counts_code_lines_only():
    assert _with_line(LINE_LIMIT) == [] and _with_line(LINE_LIMIT, markdown=True) == []
    assert len(_with_line(LINE_LIMIT + 1)) == 1 and len(_with_line(LINE_LIMIT + 1, markdown=True)) == 1
    assert f"cell 5: a code line of {LINE_LIMIT + 1} characters" in _with_line(LINE_LIMIT + 1)[0]

