"""What a learner's save keeps: the server's pre-save hook
(`ContentsManager.pre_save_hook` in jupyter/jupyter_server_config.json).

- Every widget output keeps a drawing (tools/runtime/widget_state.py).
- An answer is never replaced by the blank placeholder. A notebook open in
  two tabs is two copies in two pages: the learner answers in one and saves,
  then saves the other, which still shows `answer_3 = ____`. JupyterLab then
  asks whether to overwrite the file changed on disk, with Overwrite focused;
  before this hook, Overwrite put the blank back over the answer. Now an
  answer slot (a cell tagged `answer-slot`, matched by its id) that arrives
  holding the placeholder `____` while the file being replaced holds an
  answer there keeps the answer. Any other change of an answer is saved as
  it comes: what the learner typed last wins."""

from pathlib import Path

from tools.runtime.widget_state import keep_widget_views, stored_json

SLOT = "answer-slot"
PLACEHOLDER = "____"


def pre_save(model, path, contents_manager, **_):
    """jupyter_server's pre-save hook for the notebook about to be saved at
    `path` (other files are saved as they come)."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    replaced = stored_json(Path(contents_manager.root_dir) / path)
    kept = keep_answers(model["content"], replaced)
    if kept:
        contents_manager.log.info("Saving %s: kept the answers in %s over the blank ones sent", path,
                                  ", ".join(kept))
    keep_widget_views(model["content"], lambda: replaced)


def _source(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def keep_answers(nb, replaced):
    """Give each answer slot of `nb` (a notebook's JSON, changed in place)
    that holds the placeholder the answer the same cell holds in `replaced`
    (the file being saved over), if it holds one. Returns the ids of the
    cells that kept their answer."""
    if not replaced:
        return []
    answered = {cell.get("id"): _source(cell) for cell in replaced.get("cells", [])
                if SLOT in cell.get("metadata", {}).get("tags", []) and PLACEHOLDER not in _source(cell)}
    kept = []
    for cell in nb.get("cells", []):
        if SLOT in cell.get("metadata", {}).get("tags", []) and PLACEHOLDER in _source(cell) \
                and cell.get("id") in answered:
            cell["source"] = answered[cell["id"]]
            kept.append(cell["id"])
    return kept
