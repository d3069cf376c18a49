"""A saved notebook keeps the widget state of every widget output it holds,
so that it reopens with each widget drawn after its kernel is gone
(docs/maintaining.md, "A saved notebook reopens with every widget drawn")."""

import copy
import json

from tools.notebooks import WIDGET_STATE, WIDGET_VIEW, closure, widget_state


def keep_widget_views(nb, replaced=None):
    """Make `nb` (a notebook's JSON, changed in place) hold in its widget
    state the models of each widget output, and no others: its own, else the
    output and models the same cell holds in `replaced` (the JSON on disk,
    or None), else the output's text form."""
    sent = widget_state(nb)
    views = [(cell, i) for cell in _code_cells(nb) for i, output in enumerate(cell.get("outputs", []))
             if _model_id(output)]
    if not views and not nb.get("metadata", {}).get("widgets"):
        return
    earlier, kept = None, {}
    for cell, i in views:
        output = cell["outputs"][i]
        models = closure(_model_id(output), sent)
        if models is None:
            earlier = earlier if earlier is not None else _stored_views(replaced)
            stored = earlier.get(cell.get("id"), [])
            if stored:          # the stored output and its models, numbered as the one it replaces
                kept_output, models = stored.pop(0)
                cell["outputs"][i] = copy.deepcopy(kept_output)
                if "execution_count" in kept_output:
                    cell["outputs"][i]["execution_count"] = output.get("execution_count")
            else:               # its text/plain, or nothing when nothing else is left of it
                data = {k: v for k, v in output.get("data", {}).items() if k != WIDGET_VIEW}
                cell["outputs"][i] = {**output, "data": data} if data else None
        kept.update(models or {})
    for cell in _code_cells(nb):
        cell["outputs"] = [o for o in cell.get("outputs", []) if o is not None]
    metadata = nb.setdefault("metadata", {})
    if kept or metadata.get("widgets"):         # the state written in its format's version
        versions = metadata.get("widgets", {}).get(WIDGET_STATE, {})
        metadata["widgets"] = {WIDGET_STATE: {"version_major": versions.get("version_major", 2),
                                              "version_minor": versions.get("version_minor", 0), "state": kept}}


def _stored_views(nb):
    """{cell id: [(widget output, its models)]} of the notebook JSON `nb`
    (None: no file), for the outputs whose models its state holds."""
    state, found = widget_state(nb), {}
    for cell in _code_cells(nb or {}):
        for output in cell.get("outputs", []):
            models = closure(_model_id(output), state) if _model_id(output) else None
            if models is not None:
                found.setdefault(cell.get("id"), []).append((output, models))
    return found


def _code_cells(nb):
    return [cell for cell in nb.get("cells", []) if cell.get("cell_type") == "code"]


def _model_id(output):
    view = output.get("data", {}).get(WIDGET_VIEW) if isinstance(output, dict) else None
    return view.get("model_id") if isinstance(view, dict) else None


def stored_json(path):
    """The notebook's JSON at `path`, or None (no file yet, not JSON)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
