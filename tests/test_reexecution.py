"""`make notebooks` end to end: notebook 02 with one line changed is executed, and only that cell and its widgets'
state are rewritten (its parts: tests/test_reproducible.py; every notebook byte for byte: tests/one_execution.py)."""

import nbformat

from tools.build import run_notebooks
from tools.notebooks import WIDGET_STATE as STATE
from tools.notebooks import WIDGET_VIEW as VIEW
from tools.notebooks import closure, notebook_paths


def _shown_by(nb, cell):
    """The widget models `cell` shows: its outputs' widgets and every model their states name."""
    state = nb.metadata.widgets[STATE]["state"]
    return {m for o in cell.outputs if VIEW in o.get("data", {}) for m in closure(o.data[VIEW]["model_id"], state)}


def test_a_one_line_change_rewrites_its_own_cell_only(tmp_path):
    path = next(p for p in notebook_paths() if p.name.startswith("02-"))
    nb = nbformat.read(path, as_version=4)
    cell = next((c for c in nb.cells if c.get("id") == "step-panel"), None)
    assert cell is not None and 'description="step"' in cell.source, "02's step-panel cell moved: pick another cell"
    cell.source = cell.source.replace('description="step"', 'description="node"')
    copy = tmp_path / path.name
    nbformat.write(nb, copy)
    assert run_notebooks.main([str(copy)]) == 0
    stored, fresh = nbformat.read(path, as_version=4), nbformat.read(copy, as_version=4)
    assert [c.get("id") for c in fresh.cells if c not in stored.cells] == ["step-panel"]
    before, after = stored.metadata.widgets[STATE]["state"], fresh.metadata.widgets[STATE]["state"]
    assert set(before) == set(after)
    changed = {m for m in before if before[m] != after[m]}
    assert changed, "relabelling the slider changed no widget state: the test no longer tests anything"
    assert changed <= _shown_by(fresh, next(c for c in fresh.cells if c.get("id") == "step-panel"))
    assert {k: v for k, v in fresh.metadata.items() if k != "widgets"} == \
        {k: v for k, v in stored.metadata.items() if k != "widgets"}
