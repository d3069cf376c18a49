"""A save never puts the blank placeholder back over an answer
(tools/runtime/saving.py): the stale one of two tabs saved over the other's."""

import asyncio
import json

import nbformat
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from traitlets.config import Config

from tools.notebooks import NOTEBOOKS
from tools.runtime.saving import keep_answers

STORED = NOTEBOOKS / "03-retain-graph.ipynb"
HOOK = "tools.runtime.saving.pre_save"


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


def test_the_server_keeps_the_answer_through_the_hook(tmp_path):
    """jupyter_server's own contents manager, configured as the command line
    configures it: the stale tab's save keeps the answer on disk."""
    stored = json.loads(STORED.read_text(encoding="utf-8"))
    (tmp_path / STORED.name).write_text(json.dumps(_answered(stored)), encoding="utf-8")
    manager = AsyncLargeFileManager(config=Config({"ContentsManager": {"pre_save_hook": HOOK}}),
                                    root_dir=str(tmp_path))
    asyncio.run(manager.save({"type": "notebook", "format": "json", "content": stored}, STORED.name))
    saved = nbformat.read(tmp_path / STORED.name, as_version=4)
    assert _slots(saved)[0].source == "answer_1 = {'x - 1'}"
