"""A save never puts the blank placeholder back over an answer, and a save
from the stale one of two tabs never loses a cell the other saved
(tools/runtime/saving.py, tools/runtime/cell_merge.py). The same in the
browser, two JupyterLab tabs: tests/test_saved_widgets.py."""

import asyncio
import json
from pathlib import Path

import pytest
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from traitlets.config import Config
from traitlets.utils.importstring import import_item

from tools.notebooks import NOTEBOOKS
from tools.runtime.lab import SETTINGS, lab_argv, server_options
from tools.runtime.saving import PAGE, PAGES_FILE, keep_answers

STORED = NOTEBOOKS / "03-retain-graph.ipynb"


def _slots(nb):
    return [c for c in nb["cells"] if "answer-slot" in c.get("metadata", {}).get("tags", [])]


def _answered(nb, text="answer_1 = {'x - 1'}"):
    nb = json.loads(json.dumps(nb))
    _slots(nb)[0]["source"] = text
    return nb


def test_a_blank_sent_over_an_answer_keeps_the_answer():
    stored = json.loads(STORED.read_text(encoding="utf-8"))
    assert "____" in "".join(_slots(stored)[0]["source"]), "03's first slot is no longer blank as stored"
    on_disk, sent = _answered(stored), json.loads(json.dumps(stored))
    assert keep_answers(sent, on_disk) == [_slots(stored)[0]["id"]]
    assert _slots(sent)[0]["source"] == "answer_1 = {'x - 1'}"


def test_an_answer_changed_is_saved_as_sent():
    stored = json.loads(STORED.read_text(encoding="utf-8"))
    on_disk, sent = _answered(stored), _answered(stored, "answer_1 = {'x.clone()'}")
    assert keep_answers(sent, on_disk) == []
    assert _slots(sent)[0]["source"] == "answer_1 = {'x.clone()'}"
    assert keep_answers(_answered(stored), None) == []       # a new file: nothing to keep


# ----- two tabs: the stale one's save merged with the file the other saved -----

def _configured(root):
    """The contents manager the learner's server runs, configured as
    jupyter/jupyter_server_config.json configures it."""
    config = json.loads((SETTINGS / "jupyter_server_config.json").read_text(encoding="utf-8"))
    name = config.get("ServerApp", {}).get("contents_manager_class", f"{AsyncLargeFileManager.__module__}."
                                                                       "AsyncLargeFileManager")
    return import_item(name)(config=Config({"ContentsManager": config["ContentsManager"]}), root_dir=str(root))


def _open(manager, name):
    """What a page holds after opening the notebook: the content as JSON."""
    model = asyncio.run(manager.get(name))
    return json.loads(json.dumps(model["content"]))


def _save(manager, name, content):
    asyncio.run(manager.save({"type": "notebook", "format": "json", "content": json.loads(json.dumps(content))},
                             name))
    return json.loads((Path(manager.root_dir) / name).read_text(encoding="utf-8"))


def _cell(nb, cell_id):
    return next((c for c in nb["cells"] if c.get("id") == cell_id), None)


def _text(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _ids(nb):
    return [c.get("id") for c in nb["cells"]]


NOTE = {"cell_type": "markdown", "id": "my-note-1", "metadata": {}, "source": "My note: retain_graph keeps it."}
LESSON_EDIT = "x = torch.tensor(5.0, requires_grad=True)  # my edit"


@pytest.fixture
def two_tabs(tmp_path):
    """03 opened in two pages (tab A and tab B) of one server; tab A adds a
    note cell after section 1's example and edits that example, and saves."""
    (tmp_path / STORED.name).write_text(STORED.read_text(encoding="utf-8"), encoding="utf-8")
    manager = _configured(tmp_path)
    a, b = _open(manager, STORED.name), _open(manager, STORED.name)
    a["cells"].insert(_ids(a).index("note-example") + 1, dict(NOTE))
    _cell(a, "note-example")["source"] = LESSON_EDIT
    _save(manager, STORED.name, a)
    return manager, a, b


def test_a_stale_tab_keeps_the_cells_the_other_tab_saved(two_tabs):
    """Tab B, opened before A saved, answers a question and saves (Overwrite):
    the file keeps A's note, in its place, and A's edit of the lesson cell,
    with B's answer."""
    manager, a, b = two_tabs
    slot = _slots(b)[0]["id"]
    _cell(b, slot)["source"] = "answer_1 = {'x - 1'}"
    saved = _save(manager, STORED.name, b)
    assert _cell(saved, NOTE["id"]) is not None, "the stale tab's save lost the note cell the other tab saved"
    assert _ids(saved).index(NOTE["id"]) == _ids(saved).index("note-example") + 1, "the note moved"
    assert _text(_cell(saved, "note-example")) == LESSON_EDIT, "the stale tab's save undid the other tab's edit"
    assert _text(_cell(saved, slot)) == "answer_1 = {'x - 1'}"
    assert _ids(saved) == _ids(a), "the merged notebook's cells are not the other tab's, in its order"
    # B saves again, still without A's cells in its page: they stay
    _cell(b, slot)["source"] = "answer_1 = {'x + 1'}"
    saved = _save(manager, STORED.name, b)
    assert _text(_cell(saved, "note-example")) == LESSON_EDIT and _cell(saved, NOTE["id"]) is not None
    assert _text(_cell(saved, slot)) == "answer_1 = {'x + 1'}"


def test_one_tab_saves_as_sent_and_the_mark_stays_off_disk(tmp_path):
    """A page alone: its deletions, additions and edits are saved as sent,
    save after save (the merge never brings back a cell it deleted), and the
    page's mark never reaches the file."""
    (tmp_path / STORED.name).write_text(STORED.read_text(encoding="utf-8"), encoding="utf-8")
    manager = _configured(tmp_path)
    page = _open(manager, STORED.name)
    assert PAGE in page["metadata"], "the server's copy of the notebook carries no page mark"
    page["cells"].insert(6, dict(NOTE))
    saved = _save(manager, STORED.name, page)
    assert PAGE not in saved["metadata"] and NOTE["id"] in _ids(saved)
    page["cells"] = [c for c in page["cells"] if c["id"] not in (NOTE["id"], "s1-obs")]
    _cell(page, "note-example")["source"] = LESSON_EDIT
    saved = _save(manager, STORED.name, page)
    assert _ids(saved) == _ids(page) and _text(_cell(saved, "note-example")) == LESSON_EDIT


def test_deletions_merge_and_a_cell_both_changed_keeps_both_texts(two_tabs):
    """B deletes a cell and edits the one A edited; A had also deleted a cell
    B never touched: both deletions hold, and the cell both edited keeps B's
    text with A's in a markdown cell right after it."""
    manager, a, b = two_tabs
    a["cells"] = [c for c in a["cells"] if c["id"] != "s1-grad-md"]
    _save(manager, STORED.name, a)
    b["cells"] = [c for c in b["cells"] if c["id"] != "s2"]
    _cell(b, "note-example")["source"] = "x = torch.tensor(4.0, requires_grad=True)"
    saved = _save(manager, STORED.name, b)
    assert "s1-grad-md" not in _ids(saved) and "s2" not in _ids(saved)
    assert NOTE["id"] in _ids(saved)
    at = _ids(saved).index("note-example")
    assert _text(saved["cells"][at]) == "x = torch.tensor(4.0, requires_grad=True)"
    other = saved["cells"][at + 1]
    assert other["cell_type"] == "markdown" and "another tab" in _text(other) and LESSON_EDIT in _text(other)


def test_a_server_started_again_still_knows_the_pages_open_before(two_tabs, tmp_path):
    """make lab run again (or the hub's restart) while both tabs stay open:
    the new server reads the pages' snapshots the old one kept, and the
    stale tab's save still keeps the other tab's note and edit. A file of
    snapshots that is not one is read as none."""
    _, a, b = two_tabs
    again = _configured(tmp_path)
    slot = _slots(b)[0]["id"]
    _cell(b, slot)["source"] = "answer_1 = {'x - 1'}"
    saved = _save(again, STORED.name, b)
    assert _cell(saved, NOTE["id"]) is not None and _text(_cell(saved, "note-example")) == LESSON_EDIT
    assert _ids(saved) == _ids(a) and _text(_cell(saved, slot)) == "answer_1 = {'x - 1'}"
    kept = tmp_path / PAGES_FILE
    assert len(json.loads(kept.read_text(encoding="utf-8"))) == 2      # the two pages, and no more
    for broken in ("", "{", "[1, 2]", '[["page", {"cell": 3}]]', '{"page": {}}'):
        kept.write_text(broken, encoding="utf-8")
        assert _configured(tmp_path).pages == {}, broken


def test_a_page_the_server_does_not_know_keeps_the_answers(two_tabs):
    """A page opened before the server started (its mark unknown): the file's
    answers are kept over blank ones, as before pages were marked."""
    manager, a, b = two_tabs
    _cell(a, _slots(a)[0]["id"])["source"] = "answer_1 = {'x - 1'}"
    _save(manager, STORED.name, a)
    manager.pages.clear()
    saved = _save(manager, STORED.name, b)
    assert _text(_slots(saved)[0]) == "answer_1 = {'x - 1'}"


def test_every_server_the_learner_meets_marks_its_pages():
    """The contents manager that marks each page's copy is named where the
    hook is: jupyter/jupyter_server_config.json, and so make lab's, make
    notebook's and the hub's command lines and Binder's config."""
    option = "--ServerApp.contents_manager_class=tools.runtime.saving.Contents"
    assert option in server_options() and option in lab_argv() and option in lab_argv(app="notebook")


def test_make_edit_serves_the_stored_notebooks_and_a_save_changes_no_byte(tmp_path, monkeypatch):
    """`make edit` serves notebooks/ itself, trusted, with the learners' server options;
    each stored notebook opened and saved back through that server's contents manager
    (with its save hook) is written byte for byte as it was: no metadata churn."""
    import shutil

    from tools.runtime import lab, working_copy

    served, trusted = [], []
    monkeypatch.setattr(lab, "serve", served.append)
    monkeypatch.setattr(working_copy, "trust", trusted.append)
    lab.main(["--edit", "--no-browser"])
    (command,) = served
    assert f"--ServerApp.root_dir={NOTEBOOKS}" in command and all(o in command for o in server_options())
    assert list(trusted[0]) == working_copy.collection()
    for path in working_copy.collection():
        shutil.copy(path, tmp_path / path.name)
    manager = _configured(tmp_path)
    for path in working_copy.collection():
        _save(manager, path.name, _open(manager, path.name))
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), f"{path.name} changed by a save"
