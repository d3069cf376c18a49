"""The server's pre-save hook (`ContentsManager.pre_save_hook` in
jupyter/jupyter_server_config.json) and its contents manager `Contents`, which
marks each copy of a notebook it hands a page so that a stale tab's save is
merged with the file (cell_merge.py); every widget output keeps a drawing
(widget_state.py). How and why: docs/maintaining.md, "A save from a stale tab"."""

import json
import os
import uuid
from collections import OrderedDict
from pathlib import Path

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from tools.notebooks import SLOT
from tools.runtime.cell_merge import merge, snapshot, text
from tools.runtime.widget_state import keep_widget_views, stored_json

PLACEHOLDER = "____"
PAGE = "opened_in_page"       # the notebook's metadata: which page's copy it is
PAGES_KEPT = 500              # pages whose copies the server remembers, the last opened or saved
PAGES_SAVED = 100             # of them, the last ones kept in PAGES_FILE for a server started again
PAGES_FILE = ".ipynb_checkpoints/opened-pages.json"   # in the server's root, beside its checkpoints


class Contents(AsyncLargeFileManager):  # type: ignore[misc]
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # page mark -> the snapshot of its cells in step with the file; a restarted server (make lab
        # again, a learner's server culled while idle and started again) knows the pages opened before
        self.pages = OrderedDict(read_pages(Path(self.root_dir) / PAGES_FILE))

    async def get(self, path, content=True, type=None, format=None, **kwargs):
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        nb = model.get("content")
        cells = snapshot(nb) if model.get("type") == "notebook" and isinstance(nb, dict) else None
        if cells is not None:
            page = uuid.uuid4().hex
            nb.setdefault("metadata", {})[PAGE] = page
            self.remember(page, cells)
        return model

    def remember(self, page, cells):
        self.pages[page] = cells
        self.pages.move_to_end(page)
        while len(self.pages) > PAGES_KEPT:
            self.pages.popitem(last=False)
        try:
            write_pages(Path(self.root_dir) / PAGES_FILE, list(self.pages.items())[-PAGES_SAVED:])
        except OSError as error:
            self.log.warning("Could not keep the open pages' snapshots in %s (%s): after a restart, a save "
                             "from a page opened before it keeps the answers only", PAGES_FILE, error)


def read_pages(path):
    """The (page, snapshot) pairs kept in `path`, oldest first; none when it
    is missing or not what write_pages writes."""
    try:
        pairs = json.loads(path.read_text(encoding="utf-8"))
        return [(page, cells) for page, cells in pairs if isinstance(page, str) and isinstance(cells, dict)
                and all(isinstance(v, str) for v in [*cells, *cells.values()])]
    except (OSError, ValueError, TypeError):
        return []


def write_pages(path, pairs):
    """Write the (page, snapshot) pairs to `path` whole or not at all."""
    path.parent.mkdir(exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(pairs), encoding="utf-8")
    os.replace(partial, path)


def pre_save(model, path, contents_manager, **_):
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    nb = model["content"]
    page = nb.get("metadata", {}).pop(PAGE, None)
    pages = getattr(contents_manager, "pages", None)
    base = pages.get(page) if pages is not None and page else None
    sent = snapshot(nb)
    replaced = stored_json(Path(contents_manager.root_dir) / path)
    if base is not None and sent is not None and replaced and snapshot(replaced) is not None:
        taken = merge(nb, replaced, base)
        if taken:
            contents_manager.log.info("Saving %s from a page that had not seen the file's last save: kept "
                                      "from the file %s", path, ", ".join(f"{i} ({what})" for what, i in taken))
    else:
        kept = keep_answers(nb, replaced)
        if kept:
            contents_manager.log.info("Saving %s: kept the answers in %s over the blank ones sent", path,
                                      ", ".join(kept))
    if pages is not None and page and sent is not None:
        contents_manager.remember(page, sent)           # pages is Contents'
    keep_widget_views(nb, replaced)


def keep_answers(nb, replaced):
    """Give each answer slot of `nb` (a notebook's JSON, changed in place)
    that holds the placeholder the answer the same cell holds in `replaced`
    (the file being saved over), if it holds one. Returns the ids of the
    cells that kept their answer."""
    answered = {cell.get("id"): text(cell) for cell in (replaced or {}).get("cells", [])
                if SLOT in cell.get("metadata", {}).get("tags", []) and PLACEHOLDER not in text(cell)}
    kept = []
    for cell in nb.get("cells", []):
        if SLOT in cell.get("metadata", {}).get("tags", []) and PLACEHOLDER in text(cell) \
                and cell.get("id") in answered:
            cell["source"] = answered[cell["id"]]
            kept.append(cell["id"])
    return kept
