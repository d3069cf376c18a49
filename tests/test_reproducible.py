"""Stored outputs are reproducible: `make notebooks` on unchanged notebooks
writes them back byte for byte, and a change to one cell changes that cell's
outputs only (tools/build/run_notebooks.py `reproducible`). These are its
parts; tests/one_execution.py and tests/test_reexecution.py hold the notebooks themselves to them."""

import uuid

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook, new_output

from tools.build import run_notebooks

VIEW, STATE = run_notebooks.WIDGET_VIEW, run_notebooks.WIDGET_STATE


def _widget_notebook(slider_max=5):
    """Two cells, each showing a box holding a slider, with random model ids
    as a kernel makes them."""
    ids = [uuid.uuid4().hex for _ in range(4)]
    cells, state = [], {}
    for number, (box, slider) in enumerate((ids[:2], ids[2:])):
        cell = new_code_cell(f"panel_{number}", outputs=[new_output(
            "display_data", data={VIEW: {"model_id": box, "version_major": 2, "version_minor": 0},
                                  "text/plain": "VBox()"})])
        cell.id = f"cell-{number}"
        cells.append(cell)
        state[box] = {"model_name": "VBoxModel", "state": {"children": [f"IPY_MODEL_{slider}"]}}
        state[slider] = {"model_name": "IntSliderModel", "state": {"max": slider_max if number else 5}}
    nb = new_notebook(cells=cells)
    nb.metadata["widgets"] = {STATE: {"state": state, "version_major": 2, "version_minor": 0}}
    return nb


def test_widget_ids_are_stable_consistent_and_kept_by_a_change_to_another_cell():
    first = run_notebooks.stable_widget_ids(_widget_notebook(), "demo")
    assert nbformat.writes(first) == nbformat.writes(run_notebooks.stable_widget_ids(_widget_notebook(), "demo"))
    assert run_notebooks.stable_widget_ids(_widget_notebook(), "other") != first   # named per notebook
    state = first.metadata.widgets[STATE]["state"]
    for cell in first.cells:
        box = cell.outputs[0].data[VIEW]["model_id"]
        assert box in state
        assert state[box]["state"]["children"][0].removeprefix("IPY_MODEL_") in state
    after = run_notebooks.stable_widget_ids(_widget_notebook(slider_max=9), "demo")
    assert first.cells == after.cells                       # the ids shown are the same
    changed = [m for m in state if state[m] != after.metadata.widgets[STATE]["state"][m]]
    assert len(changed) == 1                                # only the changed slider's state


def _printing(text):
    cell = new_code_cell("print(y.grad_fn)", execution_count=3,
                         outputs=[new_output("stream", name="stdout", text=text)])
    cell.id = "grad-fn"
    return new_notebook(cells=[cell])


@pytest.mark.parametrize("fresh, written", [("<MulBackward0 object at 0x7fabcd>\n", "0x7f1234"),
                                               ("<AddBackward0 object at 0x7fabcd>\n", "0x7fabcd")])
def test_an_address_alone_keeps_the_stored_text_and_a_changed_output_is_written(fresh, written):
    stored = run_notebooks.reproducible(_printing("<MulBackward0 object at 0x7f1234>\n"), None, "demo")
    nb = run_notebooks.reproducible(_printing(fresh), stored, "demo")
    assert nb.cells[0].outputs[0].text == fresh.replace("0x7fabcd", written)


def test_a_cell_without_outputs_stores_no_run_number():
    nb = _printing("x\n")
    nb.cells.append(new_code_cell("answer_1 = ____", execution_count=4))
    nb = run_notebooks.reproducible(nb, None, "demo")
    assert [cell.execution_count for cell in nb.cells] == [3, None]


def test_prints_cut_anywhere_are_one_output():
    nb = _printing("each node after all its users:")
    nb.cells[0].outputs += [new_output("stream", name="stdout", text=" True\n"),
                            new_output("stream", name="stderr", text="warning\n"),
                            new_output("stream", name="stderr", text="again\n")]
    outputs = run_notebooks.reproducible(nb, None, "demo").cells[0].outputs
    assert [(o.name, o.text) for o in outputs] == [("stdout", "each node after all its users: True\n"),
                                                    ("stderr", "warning\nagain\n")]


def test_a_kernel_that_dies_as_it_starts_is_started_again(monkeypatch, tmp_path):
    """Two kernels started at once can be given the same free port, and one then dies before
    it answers: run_notebooks starts another, up to STARTS kernels, then gives the error."""
    path = tmp_path / "one.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("print(6 * 7)")]), path)
    real, calls = NotebookClient.execute, []

    def dies(self, *args, **kwargs):
        calls.append(1)
        if len(calls) < run_notebooks.STARTS:
            raise RuntimeError(run_notebooks.NO_START)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(NotebookClient, "execute", dies)
    assert run_notebooks.execute(path).cells[0].outputs[0].text == "42\n"
    assert len(calls) == run_notebooks.STARTS

    def always_dies(self, *args, **kwargs):
        calls.append(1)
        raise RuntimeError(run_notebooks.NO_START)

    calls.clear()
    monkeypatch.setattr(NotebookClient, "execute", always_dies)
    with pytest.raises(RuntimeError, match=run_notebooks.NO_START):
        run_notebooks.execute(path)
    assert len(calls) == run_notebooks.STARTS
