"""The collection's notebooks, as the files say: every list of notebooks (the index, the navigation,
the tests, the load tools) is derived from notebooks/ here, never written out by hand; and the one
walk of a notebook's stored widget state (`widget_state`, `model_references`, `closure`)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
INDEX = "00-index.ipynb"
# The cell tags the tools read, named here once: an exercise's answer slot and its check (make grade,
# the save hook, the teacher's copies, the stored notebooks' lesson code) and a cell that raises on
# purpose (nbval and JupyterLab's Run All read that one too). This module imports nothing heavy:
# the grader's runner, pid 1 of a sandbox, imports it without torch.
SLOT, CHECK, RAISES = "answer-slot", "answer-check", "raises-exception"
# A widget output's MIME type, and the notebook metadata's key for the widgets' state.
WIDGET_VIEW, WIDGET_STATE = "application/vnd.jupyter.widget-view+json", "application/vnd.jupyter.widget-state+json"
REFERENCE = "IPY_MODEL_"          # how one widget model names another in its state


def notebook_paths(folder=NOTEBOOKS):
    """Every notebook of the collection, in reading order (the index first)."""
    return sorted(folder.glob("[0-9][0-9]-*.ipynb"))


def widget_state(nb):
    """{model id: model} of the widget state `nb` (a notebook's JSON, or None) stores."""
    return ((nb or {}).get("metadata", {}).get("widgets") or {}).get(WIDGET_STATE, {}).get("state") or {}


def model_references(value):
    """(key path, model id) for each widget model `value` (a model's state, or
    part of it) names: "IPY_MODEL_<id>" strings and the views an Output
    widget's outputs hold, in key order (make notebooks names models by it).
    Walked without recursion: a page may send JSON of any depth."""
    todo = [("", value)]
    while todo:
        path, item = todo.pop()
        if isinstance(item, dict):
            todo += [(f"{path}/{key}".lstrip("/"), item[key]) for key in sorted(item, reverse=True)]
        elif isinstance(item, list):
            todo += [(f"{path}/{i}".lstrip("/"), v) for i, v in reversed(list(enumerate(item)))]
        elif isinstance(item, str) and (item.startswith(REFERENCE)
                                        or item and path.endswith(f"{WIDGET_VIEW}/model_id")):
            yield path, item.removeprefix(REFERENCE)


def closure(model_id, state):
    """The models `model_id` needs (itself and every model its state names,
    through children, layouts, styles...), or None when `state` lacks one."""
    found, todo = {}, [model_id]
    while todo:
        name = todo.pop()
        if name not in found:
            if name not in state:
                return None
            found[name] = state[name]
            todo += [model for _, model in model_references(state[name].get("state", {}))]
    return found
