"""The registry's widgets found in the notebooks by cell tag: a widget's cell, the widget cells nobody registered
and the entries with no cell (`problems`), a stored output unlike its declaration (`stored_problems`)."""

from collections.abc import Mapping
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from helpers.lessons import widgets
from helpers.lessons.widget import TAG, Widget
from helpers.widgets import NO_DRAWING
from tools.notebooks import WIDGET_VIEW, widget_state

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def code_cells(nb: NotebookNode) -> list[NotebookNode]:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def widget_tags(cell: NotebookNode) -> list[str]:
    return [tag for tag in cell.metadata.get("tags", []) if tag.startswith(TAG)]


def shows_a_widget(cell: NotebookNode) -> bool:
    """A stored widget view, or `panel(` in the cell's code."""
    return "panel(" in cell.source or any(WIDGET_VIEW in output.get("data", {}) for output in cell.get("outputs", []))


def cell_index(notebook: str, tag: str, folder: Path = NOTEBOOKS) -> int:
    """The position among the code cells (JupyterLab's `.jp-CodeCell`s) of the one tagged `tag`."""
    cells = code_cells(nbformat.read(folder / f"{notebook}.ipynb", as_version=4))
    return next(i for i, cell in enumerate(cells) if tag in widget_tags(cell))     # one only: `problems`


def problems(notebooks: Mapping[str, NotebookNode]) -> list[str]:
    """Widget cells without a registered tag, tags on cells that show no widget, widgets without exactly one cell."""
    by_tag = {w.tag: w for w in widgets()}
    found, seen = [], dict.fromkeys(by_tag, 0)
    for name, nb in notebooks.items():
        for number, cell in enumerate(code_cells(nb)):
            tags, first = widget_tags(cell), cell.source.splitlines()[0] if cell.source else ""
            if shows_a_widget(cell) and not tags:
                found.append(f"{name}: code cell {number} shows a widget but is not registered: give it a tag "
                             f"{TAG}<name> and declare it in helpers/lessons/nbNN.py ({first})")
            elif tags and not shows_a_widget(cell):
                found.append(f"{name}: code cell {number} is tagged {', '.join(tags)} but shows no widget")
            for tag in tags:
                if tag not in by_tag or by_tag[tag].notebook != name:
                    found.append(f"{name}: code cell {number} is tagged {tag}, which the registry does not "
                                 f"declare for this notebook")
                else:
                    seen[tag] += 1
    return found + [f"{tag}: {count} cells in {by_tag[tag].notebook} carry this tag; one must"
                    for tag, count in seen.items() if count != 1 and by_tag[tag].notebook in notebooks]


def stored_problems(nb: NotebookNode, widget: Widget) -> list[str]:
    """How the stored output differs from the declaration: its text form names the controls in order and shows a
    drawing, not an error; its saved state has the declared kinds of control."""
    cell = next(c for c in code_cells(nb) if widget.tag in widget_tags(c))
    views = [o.data for o in cell.get("outputs", []) if WIDGET_VIEW in o.get("data", {})]
    if len(views) != 1:
        return [f"{widget.tag}: {len(views)} stored widget views; one expected"]
    text = views[0].get("text/plain", "")
    found = [] if text.startswith("panel(") else [f"{widget.tag}: text/plain is not a panel's: {text[:60]!r}"]
    names = [part.split("=", 1)[0] for part in text.split("\n", 1)[0].removeprefix("panel(").split(", ")]
    found += [] if names == list(widget.controls) else [f"{widget.tag}: controls {names}, declared "
                                                        f"{list(widget.controls)}"]
    found += [f"{widget.tag}: stored view shows an error: {text}"] if f"\n{NO_DRAWING} " in text else []
    models = _controls(nb, views[0][WIDGET_VIEW]["model_id"])
    kinds = [model.get("model_name", "?") for model in models]
    declared = [f"{kind}Model" for kind in widget.controls.values()]
    return found + ([] if kinds == declared else [f"{widget.tag}: saved controls {kinds}, declared {declared}"])


def _controls(nb: NotebookNode, model_id: str) -> list[dict]:
    """The stored models of the controls in a stored panel (its first row)."""
    state = widget_state(nb)
    children = state.get(model_id, {}).get("state", {}).get("children", [])
    row = state.get(children[0].removeprefix("IPY_MODEL_"), {}) if children else {}
    controls = row.get("state", {}).get("children", [])
    return [state.get(ref.removeprefix("IPY_MODEL_"), {}) for ref in controls]
