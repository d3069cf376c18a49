"""Parts of `make notebooks` (tools/build/run_notebooks.py) no notebook shows; tests/one_execution.py
(byte for byte, in make test) and tests/test_reexecution.py hold the stored notebooks to the rest."""

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook, new_output

from tools.build import run_notebooks


def _printing(text):
    cell = new_code_cell("print(y.grad_fn)", execution_count=3,
                         outputs=[new_output("stream", name="stdout", text=text)])
    cell.id = "grad-fn"
    return new_notebook(cells=[cell])


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
